/** The minute (ISO, seconds zero) whose ingress counts a moment falls in. */
export const countMinute = (at: Date): string => `${at.toISOString().slice(0, 16)}:00.000Z`;

let nowMs = Number.NaN;
let nowIso = '';
/**
 * `new Date().toISOString()`, formatted at most once per millisecond: the worker stamps every
 * action's start, end and counts, and formatting a date costs more than the rest of a stamp.
 */
export function isoNow(ms = Date.now()): string {
  if (ms !== nowMs) {
    nowMs = ms;
    nowIso = new Date(ms).toISOString();
  }
  return nowIso;
}

let minuteMs = Number.NaN;
let minuteIso = '';
/** `countMinute(new Date())`, formatted once per minute. */
export function countMinuteNow(): string {
  const ms = Date.now();
  const start = ms - (ms % 60_000);
  if (start !== minuteMs) {
    minuteMs = start;
    minuteIso = new Date(start).toISOString();
  }
  return minuteIso;
}
