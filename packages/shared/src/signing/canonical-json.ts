/** No lone surrogate (String.prototype.isWellFormed, Node 20; not in TypeScript's ES2023 lib). */
export const isWellFormed = (text: string): boolean =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

function serialise(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      if (!isWellFormed(value)) throw new TypeError('a lone surrogate has no canonical JSON form');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no canonical JSON form`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        return serialise((value as { toJSON(): unknown }).toJSON());
      }
      if (Array.isArray(value))
        return `[${value.map((item) => serialise(item) ?? 'null').join(',')}]`;
      const members: string[] = [];
      // Default sort: by UTF-16 code units, as RFC 8785 orders keys.
      for (const key of Object.keys(value).sort()) {
        const member = serialise((value as Record<string, unknown>)[key]);
        if (member !== undefined) members.push(`${serialise(key)!}:${member}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      // undefined, functions and symbols: left out, as JSON.stringify leaves them out.
      return undefined;
  }
}

/**
 * RFC 8785 canonical JSON (keys sorted by UTF-16 code units, no whitespace, ECMAScript number
 * and string serialisation). Checked equal to the `canonicalize` package, the reference by the
 * RFC's author, over generated JSON values; written here because the ingress computes it for
 * every request before knowing the sender, and native `JSON.stringify` of each string makes it
 * about 2.5 times cheaper than that package's character-by-character surrogate check.
 * Throws a TypeError for values with no canonical form (lone surrogates, NaN, Infinity).
 */
export function canonicalJson(value: unknown): string {
  const text = serialise(value);
  if (text === undefined) throw new TypeError('value cannot be serialised as JSON');
  return text;
}
