/** The most characters an error text keeps: an action's `last_error`, a job's failure reason. */
export const MAX_ERROR_LENGTH = 500;

/**
 * The first `length` UTF-16 units of `text` at most, cut between characters: never ending on the
 * first half of a surrogate pair, which no store could keep on its own
 * (docs/records.md#text-the-store-keeps).
 */
export function headOf(text: string, length: number): string {
  if (text.length <= length) return text;
  return text.slice(0, Math.max(0, length)).replace(/[\uD800-\uDBFF]$/, '');
}

/** The last `length` UTF-16 units of `text` at most, never starting on the second half of a pair. */
export function tailOf(text: string, length: number): string {
  if (text.length <= length) return text;
  return length <= 0 ? '' : text.slice(-length).replace(/^[\uDC00-\uDFFF]/, '');
}

/** The error text cut to `MAX_ERROR_LENGTH` characters, ending in `…` when it was cut. */
export function boundedError(text: string): string {
  if (text.length <= MAX_ERROR_LENGTH) return text;
  return `${headOf(text, MAX_ERROR_LENGTH - 1)}…`;
}
