// `.env.example`: `NAME=value` lines, each with the comment lines just above it (a comment may
// describe several variables in a row).

export interface EnvEntry {
  name: string;
  value: string;
  /** The comment lines above the variable (or above its group), without `#`. */
  comment: string;
}

export function parseEnvFile(text: string): EnvEntry[] {
  const entries: EnvEntry[] = [];
  let comment: string[] = [];
  let inGroup = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') {
      comment = [];
      inGroup = false;
    } else if (line.startsWith('#')) {
      if (inGroup) comment = [];
      inGroup = false;
      comment.push(line.replace(/^#\s?/, ''));
    } else {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
      if (!match) throw new Error(`not a NAME=value line: "${line}"`);
      entries.push({ name: match[1]!, value: match[2]!, comment: comment.join(' ') });
      inGroup = true;
    }
  }
  return entries;
}
