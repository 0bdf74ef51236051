// Compose's variable interpolation (compose-spec 12-interpolation.md): `$VAR`, `${VAR}`,
// `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `${VAR:+alt}`,
// `${VAR+alt}`, defaults nested, and `$$` for a literal `$`. Applied to values, never to keys.

export interface VariableUse {
  name: string;
  /** The `:-` or `-` default, when there is one. */
  fallback?: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Index of the `}` closing the `${` whose body starts at `start`. */
function closingBrace(text: string, start: number): number {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '$' && text[i + 1] === '{') {
      depth++;
      i++;
    } else if (text[i] === '}' && --depth === 0) return i;
  }
  throw new Error(`unclosed \${ in "${text}"`);
}

/** Replaces every variable in `text` from `env`; `uses` collects the variables met. */
export function interpolate(
  text: string,
  env: Record<string, string | undefined>,
  uses: VariableUse[] = [],
): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char !== '$') {
      out += char;
      continue;
    }
    if (text[i + 1] === '$') {
      out += '$';
      i++;
      continue;
    }
    if (text[i + 1] !== '{') {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (!name) throw new Error(`a lone "$" in "${text}": write "$$"`);
      uses.push({ name });
      out += env[name] ?? '';
      i += name.length;
      continue;
    }
    const end = closingBrace(text, i + 2);
    const body = text.slice(i + 2, end);
    const name = NAME.exec(body)?.[0];
    if (!name) throw new Error(`a bad variable "\${${body}}" in "${text}"`);
    const operator = /^(:-|-|:\?|\?|:\+|\+)?/.exec(body.slice(name.length))![0];
    const argument = body.slice(name.length + operator.length);
    if (operator === '' && argument !== '') throw new Error(`a bad variable "\${${body}}"`);
    const value = env[name];
    const set = value !== undefined;
    const nonEmpty = set && value !== '';
    const rest = () => interpolate(argument, env, uses);
    uses.push(operator === ':-' || operator === '-' ? { name, fallback: argument } : { name });
    if (operator === ':-') out += nonEmpty ? value : rest();
    else if (operator === '-') out += set ? value : rest();
    else if (operator === ':?' || operator === '?') {
      if (operator === ':?' ? !nonEmpty : !set) throw new Error(`${name}: ${argument}`);
      out += value;
    } else if (operator === ':+') out += nonEmpty ? rest() : '';
    else if (operator === '+') out += set ? rest() : '';
    else out += value ?? '';
    i = end;
  }
  return out;
}

/** Interpolates every string value of a parsed Compose document (keys are left alone). */
export function interpolateValues(
  value: unknown,
  env: Record<string, string | undefined>,
  uses: VariableUse[] = [],
): unknown {
  if (typeof value === 'string') return interpolate(value, env, uses);
  if (Array.isArray(value)) return value.map((item) => interpolateValues(item, env, uses));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateValues(item, env, uses)]),
    );
  return value;
}
