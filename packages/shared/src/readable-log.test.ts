import { describe, expect, it } from 'vitest';
import { readableLine } from './readable-log.js';

const line = (fields: Record<string, unknown>) =>
  readableLine(
    'ingress',
    JSON.stringify({ time: '2026-01-02T09:00:00.000Z', level: 'info', msg: 'accepted', ...fields }),
    false,
  );

/** Anything a terminal would act on, not show or show as a blank: none may reach the line raw. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]|(?! )\p{Zs}/u;

const escape = (char: string) =>
  [...Array(char.length).keys()]
    .map((index) => `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`)
    .join('');

describe('readable log lines', () => {
  it('prints plain values as they are', () => {
    expect(line({ entity_id: 'Q-1', attempt: 2 })).toBe(
      '09:00:00 ingress   info  accepted entity_id=Q-1 attempt=2',
    );
  });

  it.each([
    ['RIGHT-TO-LEFT OVERRIDE', '\u202e'],
    ['ARABIC LETTER MARK', '\u061c'],
    ['LEFT-TO-RIGHT MARK', '\u200e'],
    ['RIGHT-TO-LEFT MARK', '\u200f'],
    ['LEFT-TO-RIGHT EMBEDDING', '\u202a'],
    ['RIGHT-TO-LEFT EMBEDDING', '\u202b'],
    ['POP DIRECTIONAL FORMATTING', '\u202c'],
    ['LEFT-TO-RIGHT OVERRIDE', '\u202d'],
    ['LEFT-TO-RIGHT ISOLATE', '\u2066'],
    ['RIGHT-TO-LEFT ISOLATE', '\u2067'],
    ['FIRST STRONG ISOLATE', '\u2068'],
    ['POP DIRECTIONAL ISOLATE', '\u2069'],
    ['ZERO WIDTH SPACE', '\u200b'],
    ['ZERO WIDTH NON-JOINER', '\u200c'],
    ['ZERO WIDTH JOINER', '\u200d'],
    ['ZERO WIDTH NO-BREAK SPACE', '\ufeff'],
    ['SOFT HYPHEN', '\u00ad'],
    ['LINE SEPARATOR', '\u2028'],
    ['PARAGRAPH SEPARATOR', '\u2029'],
    ['DELETE', '\u007f'],
    ['NEXT LINE (C1)', '\u0085'],
    ['CONTROL SEQUENCE INTRODUCER (C1)', '\u009b'],
    ['LANGUAGE TAG (astral)', '\u{e0001}'],
    ['BRAILLE PATTERN BLANK', '\u2800'],
    ['HANGUL FILLER', '\u3164'],
    ['HANGUL CHOSEONG FILLER', '\u115f'],
    ['HALFWIDTH HANGUL FILLER', '\uffa0'],
    ['COMBINING GRAPHEME JOINER', '\u034f'],
    ['VARIATION SELECTOR-16', '\ufe0f'],
    ['NO-BREAK SPACE', '\u00a0'],
    ['IDEOGRAPHIC SPACE', '\u3000'],
    ['EM SPACE', '\u2003'],
  ])('prints %s escaped, as sent, wherever it is logged', (_name, char) => {
    const sent = `Q-1${char}1-Q`;
    const printed = line({ entity_id: sent, [`key${char}`]: 1, nested: { id: sent } });
    expect(printed).not.toMatch(UNSAFE);
    expect(printed).toContain(`entity_id="Q-1${escape(char)}1-Q"`);
    expect(printed).toContain(`"key${escape(char)}"=1`);
    expect(printed).toContain(`nested={"id":"Q-1${escape(char)}1-Q"}`);
    const message = readableLine(
      'worker',
      JSON.stringify({ msg: sent, err: { message: sent } }),
      false,
    );
    expect(message).toBe(` worker    info  "Q-1${escape(char)}1-Q"  error="Q-1${escape(char)}1-Q"`);
    expect(readableLine('worker', `not JSON ${sent}`, false)).toBe(
      `worker    "not JSON Q-1${escape(char)}1-Q"`,
    );
  });

  it('keeps C0 controls JSON-escaped: a CR/LF cannot start a forged line, ESC cannot paint', () => {
    const printed = line({ entity_id: 'Q-1\r\n09:00:00 ingress   info  FORGED\u001b[2J' });
    expect(printed).toBe(
      '09:00:00 ingress   info  accepted entity_id="Q-1\\r\\n09:00:00 ingress   info  FORGED\\u001b[2J"',
    );
  });
});
