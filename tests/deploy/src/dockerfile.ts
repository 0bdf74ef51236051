// A Dockerfile as stages of instructions: enough to check what each build target copies and runs.
// Follows the reference's rules for comments, parser directives and `\` line continuations.

export interface Instruction {
  keyword: string;
  /** Everything after the keyword, continuations joined. */
  args: string;
  /** The JSON array of the exec form (`CMD ["node", "x.js"]`), when the arguments are one. */
  exec?: string[];
  line: number;
}

export interface Stage {
  /** The `AS` name, else the stage's index. */
  name: string;
  from: string;
  instructions: Instruction[];
}

export const KEYWORDS = new Set([
  'ADD',
  'ARG',
  'CMD',
  'COPY',
  'ENTRYPOINT',
  'ENV',
  'EXPOSE',
  'FROM',
  'HEALTHCHECK',
  'LABEL',
  'MAINTAINER',
  'ONBUILD',
  'RUN',
  'SHELL',
  'STOPSIGNAL',
  'USER',
  'VOLUME',
  'WORKDIR',
]);

function execForm(text: string): string[] | undefined {
  if (!text.trim().startsWith('[')) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')
      ? parsed
      : undefined;
  } catch {
    return undefined;
  }
}

/** The instructions in order; throws on an unknown keyword. */
export function parseInstructions(text: string): Instruction[] {
  const lines = text.split('\n');
  const instructions: Instruction[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    // Comments (and parser directives) are whole lines, also inside a continued instruction.
    if (trimmed.startsWith('#')) return;
    if (!pending && trimmed === '') return;
    const continued = /\\\s*$/.test(raw);
    const part = continued ? raw.replace(/\\\s*$/, '') : raw;
    pending ??= { parts: [], line: index + 1 };
    pending.parts.push(part.trim());
    if (continued) return;
    const whole = pending.parts.filter(Boolean).join(' ');
    const match = /^(\S+)\s*(.*)$/.exec(whole);
    if (match) {
      const keyword = match[1]!.toUpperCase();
      if (!KEYWORDS.has(keyword))
        throw new Error(`line ${pending.line}: unknown instruction ${match[1]}`);
      const args = match[2]!;
      instructions.push({ keyword, args, exec: execForm(args), line: pending.line });
    }
    pending = undefined;
  });
  if (pending) throw new Error('the Dockerfile ends inside a continued line');
  return instructions;
}

/** The build stages, each with the instructions after its FROM. */
export function parseStages(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of parseInstructions(text)) {
    if (instruction.keyword === 'FROM') {
      const match = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!match) throw new Error(`line ${instruction.line}: a FROM without an image`);
      stages.push({ name: match[2] ?? String(stages.length), from: match[1]!, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push(instruction);
    } else if (instruction.keyword !== 'ARG') {
      throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
    }
  }
  return stages;
}

/** A COPY's flags, sources and destination (shell form; the JSON form too). */
export function copyParts(instruction: Instruction): {
  flags: Record<string, string>;
  sources: string[];
  destination: string;
} {
  const words = instruction.exec ?? instruction.args.split(/\s+/).filter(Boolean);
  const flags: Record<string, string> = {};
  while (words[0]?.startsWith('--')) {
    const [flag, value = ''] = words.shift()!.slice(2).split('=');
    flags[flag!] = value;
  }
  if (instruction.exec) {
    // JSON form: flags come before the array in the arguments text.
    const before = instruction.args.slice(0, instruction.args.indexOf('['));
    for (const word of before.split(/\s+/).filter(Boolean)) {
      const [flag, value = ''] = word.slice(2).split('=');
      flags[flag!] = value;
    }
  }
  const destination = words.pop();
  if (!destination || words.length === 0)
    throw new Error(`line ${instruction.line}: a COPY needs a source and a destination`);
  return { flags, sources: words, destination };
}

/** A HEALTHCHECK's options and its command (exec form after `CMD`). */
export function healthcheckCommand(instruction: Instruction): string[] | undefined {
  const at = instruction.args.search(/\bCMD\b/);
  if (at < 0) return undefined;
  return execForm(instruction.args.slice(at + 3).trim());
}
