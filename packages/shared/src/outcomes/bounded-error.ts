/** The most characters an error text keeps: an action's `last_error`, a job's failure reason. */
export const MAX_ERROR_LENGTH = 500;

/** The error text cut to `MAX_ERROR_LENGTH` characters, ending in `…` when it was cut. */
export function boundedError(text: string): string {
  if (text.length <= MAX_ERROR_LENGTH) return text;
  // Never end on half a surrogate pair.
  const kept = text.slice(0, MAX_ERROR_LENGTH - 1).replace(/[\uD800-\uDBFF]$/, '');
  return `${kept}…`;
}
