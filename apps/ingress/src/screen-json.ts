/**
 * Limits on a body's shape that no real event comes near (the largest has about 30 values and 3
 * levels). They bound what a request costs before its signature is known: parsing, digesting and
 * canonicalising grow with the number of values, and recursion with the depth.
 */
export const JSON_SHAPE_LIMITS = Object.freeze({
  /** JSON values in the body: scalars, objects and arrays, members' values counted, keys not. */
  maxValues: 2000,
  /** Objects and arrays nested in one another. */
  maxDepth: 32,
});

export type ShapeVerdict = { ok: true } | { ok: false; reason: 'values' | 'depth' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** The index of the quote that closes the string opened at `start`, or -1. */
function endOfString(body: Buffer, start: number): number {
  let end = body.indexOf(QUOTE, start + 1);
  while (end !== -1) {
    let backslashes = 0;
    while (body[end - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = body.indexOf(QUOTE, end + 1);
  }
  return -1;
}

/**
 * A cheap pass over the raw bytes, before anything is parsed: counts the JSON values and the
 * nesting depth, and stops at the first limit passed. Strings are skipped with `indexOf`, so a
 * body of long strings costs little more than a copy. It does not check the syntax (JSON.parse
 * does that next); for a valid body its counts are exact.
 */
export function screenJson(body: Buffer, limits = JSON_SHAPE_LIMITS): ShapeVerdict {
  let values = 0;
  let depth = 0;
  // After `{` or `[`: the next token either closes it or is its first element.
  let openedEmpty = false;
  let first = true;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (isSpace(byte)) continue;
    if (first || openedEmpty) {
      if (byte !== CLOSE_OBJECT && byte !== CLOSE_ARRAY) values++;
      first = false;
      openedEmpty = false;
    }
    if (byte === QUOTE) {
      const end = endOfString(body, i);
      if (end === -1) break;
      i = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > limits.maxDepth) return { ok: false, reason: 'depth' };
      openedEmpty = true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    } else if (byte === COMMA) {
      values++;
    }
    if (values > limits.maxValues) return { ok: false, reason: 'values' };
  }
  return { ok: true };
}
