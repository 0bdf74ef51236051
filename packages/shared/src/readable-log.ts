// `npm start`'s readable lines: one JSON log line (pino's) as
// `hh:mm:ss name level message key=value …`, every character shown as it was logged.

const colours: Record<string, string> = {
  ingress: '36',
  worker: '35',
  dashboard: '34',
  start: '32',
};
const levelColours: Record<string, string> = { warn: '33', error: '31', fatal: '31' };

/**
 * What can forge, reorder or hide text on a terminal, printed raw: controls (C0 with CR, LF and
 * ESC; DEL; C1), format characters (the bidi controls such as U+202E, zero-width ones, U+FEFF),
 * the line and paragraph separators U+2028 and U+2029, and what shows as nothing or as a blank:
 * every default-ignorable character (U+3164 HANGUL FILLER, U+115F, variation selectors), every
 * space but the ASCII one (U+00A0, U+3000) and U+2800 BRAILLE PATTERN BLANK, so that no value
 * reads as two.
 */
const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** `\uXXXX` for each UTF-16 unit of `char` (an astral format character is two). */
function escapeUnits(char: string): string {
  let text = '';
  for (let index = 0; index < char.length; index++) {
    text += `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`;
  }
  return text;
}

/**
 * A value as JSON, every unsafe character escaped: JSON.stringify escapes C0 controls but leaves
 * DEL, C1, format characters and U+2028/U+2029 as they are.
 */
const quoted = (value: unknown): string =>
  (JSON.stringify(value) ?? 'undefined').replace(UNSAFE_ALL, escapeUnits);

/** A logged value as text: quoted when it holds an unsafe character or is not a string. */
const shown = (value: unknown): string =>
  typeof value === 'string' && !UNSAFE.test(value) ? value : quoted(value);

/** One log line of app `name` for the terminal; every value on it stays on it. */
export function readableLine(name: string, line: string, useColour: boolean): string {
  const paint = (code: string | undefined, text: string) =>
    useColour && code ? `\u001b[${code}m${text}\u001b[0m` : text;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `${paint(colours[name], name.padEnd(9))} ${shown(line)}`;
  }
  if (typeof record !== 'object' || record === null) {
    return `${paint(colours[name], name.padEnd(9))} ${shown(line)}`;
  }
  const { time, level, msg, name: _name, pid: _pid, hostname: _host, err, ...rest } = record;
  const clock = typeof time === 'string' ? time.slice(11, 19) : '';
  // A value with a space is quoted too, so `key=value` pairs stay readable as pairs.
  const fields = Object.entries(rest)
    .map(
      ([key, value]) => `${shown(key)}=${/\s/.test(String(value)) ? quoted(value) : shown(value)}`,
    )
    .join(' ');
  const error =
    err && typeof err === 'object' && 'message' in err
      ? ` error=${quoted(String(err.message))}`
      : '';
  const levelText = typeof level === 'string' ? shown(level) : 'info';
  return `${shown(clock)} ${paint(colours[name], name.padEnd(9))} ${paint(levelColours[levelText], levelText.padEnd(5))} ${shown(msg ?? '')} ${paint('2', fields)}${error}`;
}
