// `npm start`'s readable lines: one JSON log line as `hh:mm:ss name level message key=value …`.

const colours: Record<string, string> = {
  ingress: '36',
  worker: '35',
  dashboard: '34',
  start: '32',
};
const levelColours: Record<string, string> = { warn: '33', error: '31', fatal: '31' };

/** Control characters (CR, LF, ESC, …): printed raw, a logged value could forge a line or a colour. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A logged value as text: JSON-quoted when it holds a control character or is not a string. */
const shown = (value: unknown): string =>
  typeof value === 'string' && !CONTROL.test(value)
    ? value
    : (JSON.stringify(value) ?? 'undefined');

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
      ([key, value]) =>
        `${shown(key)}=${/\s/.test(String(value)) ? JSON.stringify(value) : shown(value)}`,
    )
    .join(' ');
  const error =
    err && typeof err === 'object' && 'message' in err
      ? ` error=${JSON.stringify(String(err.message))}`
      : '';
  const levelText = typeof level === 'string' ? shown(level) : 'info';
  return `${shown(clock)} ${paint(colours[name], name.padEnd(9))} ${paint(levelColours[levelText], levelText.padEnd(5))} ${shown(msg ?? '')} ${paint('2', fields)}${error}`;
}
