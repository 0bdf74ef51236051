// A Dockerfile as stages of instructions: enough to check what each build target copies and runs.
// dockerfile-ast reads the file (comments, parser directives, `\` continuations, flags). Exec forms
// are read with JSON.parse, as Docker reads them: the library's own JSON strings drop the spaces
// inside them (0.7.1), which would change a `node -e` health check.
import { DockerfileParser, From, Keyword, ModifiableInstruction } from 'dockerfile-ast';
import type { Instruction as Node } from 'dockerfile-ast';

export interface Instruction {
  keyword: string;
  /** Everything after the keyword and its flags, continuations joined. */
  args: string;
  /** The flags before the arguments: `--from=build` is `{ from: 'build' }`. */
  flags: Record<string, string>;
  /** The arguments: the strings of the exec form, else the words of the shell form. */
  words: string[];
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

/** Throws on an unknown keyword (dockerfile-ast keeps it as a plain instruction). */
function toInstruction(node: Node): Instruction {
  const keyword = node.getKeyword();
  const line = node.getRange().start.line + 1;
  if (!Object.values<string>(Keyword).includes(keyword))
    throw new Error(`line ${line}: unknown instruction ${node.getInstruction()}`);
  const args = node.getArgumentsContent() ?? '';
  const flags = node instanceof ModifiableInstruction ? node.getFlags() : [];
  const exec = execForm(args);
  return {
    keyword,
    args,
    flags: Object.fromEntries(flags.map((flag) => [flag.getName(), flag.getValue() ?? ''])),
    words: exec ?? node.getArguments().map((argument) => argument.getValue()),
    exec,
    line,
  };
}

/** The build stages, each with the instructions after its FROM. */
export function parseStages(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const node of DockerfileParser.parse(text).getInstructions()) {
    const instruction = toInstruction(node);
    if (node instanceof From) {
      const image = node.getImage();
      if (!image) throw new Error(`line ${instruction.line}: a FROM without an image`);
      stages.push({
        name: node.getBuildStage() ?? String(stages.length),
        from: image,
        instructions: [],
      });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push(instruction);
    } else if (instruction.keyword !== 'ARG') {
      throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
    }
  }
  return stages;
}

/** A COPY's flags, sources and destination (shell form; the JSON form too). */
export function copyParts({ flags, words, line }: Instruction): {
  flags: Record<string, string>;
  sources: string[];
  destination: string;
} {
  const destination = words.at(-1);
  if (!destination || words.length < 2)
    throw new Error(`line ${line}: a COPY needs a source and a destination`);
  return { flags, sources: words.slice(0, -1), destination };
}

/** The command of `HEALTHCHECK [OPTIONS] CMD ["node", …]` (exec form), else undefined. */
export function healthcheckCommand({ keyword, args, words }: Instruction): string[] | undefined {
  const [subcommand] = words;
  if (keyword !== 'HEALTHCHECK' || subcommand?.toUpperCase() !== 'CMD') return undefined;
  return execForm(args.slice(subcommand.length));
}

/** A .dockerignore pattern as a regular expression: `**` any folders, `*` and `?` within one. */
function ignoreRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * The .dockerignore pattern that keeps `path` (or a folder it is in) out of the build context, if
 * any: the last matching line wins, and a `!` line lets the path back in.
 */
export function dockerignoreExcludes(dockerignore: string, path: string): string | undefined {
  const parts = path.split('/');
  const candidates = parts.map((_, index) => parts.slice(0, index + 1).join('/'));
  let excludedBy: string | undefined;
  for (const line of dockerignore.split('\n').map((text) => text.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
    if (candidates.some((candidate) => ignoreRegex(pattern).test(candidate)))
      excludedBy = negated ? undefined : line;
  }
  return excludedBy;
}

/** The stage `name` and the stages it is built FROM, nearest first. */
export function lineage(stages: Stage[], name: string): Stage[] {
  const own = stages.find((candidate) => candidate.name === name);
  if (!own) throw new Error(`the Dockerfile has no stage ${name}`);
  const parent = stages.find((candidate) => candidate.name === own.from);
  return parent ? [own, ...lineage(stages, parent.name)] : [own];
}

/**
 * The instruction with `keyword` that the image of stage `name` gets: the stage's last, else its
 * nearest parent's (USER, HEALTHCHECK and CMD carry over to the stages built FROM one).
 */
export function inherited(stages: Stage[], name: string, keyword: string): Instruction | undefined {
  for (const stage of lineage(stages, name)) {
    const found = stage.instructions.findLast((instruction) => instruction.keyword === keyword);
    if (found) return found;
  }
  return undefined;
}
