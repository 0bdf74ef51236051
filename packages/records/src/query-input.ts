import { PwError } from '@pw/shared/runtime';
import type { FailureCode } from '@pw/shared/runtime';

// What a reader of the store passes in from outside (an operator's query string): every malformed
// value is a `PwError` with one of these codes, which the operator API answers with 400.

/** A `cursor` that no page of this store handed out. */
export const INVALID_CURSOR = 'invalid_cursor' satisfies FailureCode;
/** A `from` or `to` that is not an ISO 8601 time, or a `to` before `from`. */
export const INVALID_TIME = 'invalid_time' satisfies FailureCode;

/**
 * A keyset position, opaque to callers: base64url of `[time, key]`, the sort keys of the last row
 * of a page.
 */
export const encodeCursor = (time: string, key: string): string =>
  Buffer.from(JSON.stringify([time, key])).toString('base64url');

export function decodeCursor(cursor: string): { time: string; key: string } {
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (error) {
    throw new PwError(INVALID_CURSOR, 'the cursor is malformed', { cause: error });
  }
  if (
    !Array.isArray(position) ||
    position.length !== 2 ||
    typeof position[0] !== 'string' ||
    typeof position[1] !== 'string' ||
    !isIsoTime(position[0])
  ) {
    throw new PwError(INVALID_CURSOR, 'the cursor is malformed');
  }
  return { time: position[0], key: position[1] };
}

/** An ISO 8601 time as a Date; `name` says which parameter was wrong. */
export function parseTime(value: string, name: string): Date {
  if (!isIsoTime(value)) {
    throw new PwError(INVALID_TIME, `${name} is not an ISO 8601 time: ${JSON.stringify(value)}`);
  }
  return new Date(value);
}

/** A page size: `fallback` when not given, else a whole number between 1 and `max`. */
export function pageLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.min(Math.max(Math.trunc(limit), 1), max);
}

/**
 * A date (midnight UTC), or a date and time with its zone: without one, `Date` would read the
 * time in the server's own zone.
 */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function isIsoTime(value: string): boolean {
  if (!ISO_TIME.test(value) || Number.isNaN(new Date(value).getTime())) return false;
  // `Date` takes 2025-02-30 for 2025-03-02; PostgreSQL would not.
  const [year = 0, month = 0, day = 0] = value.slice(0, 10).split('-').map(Number);
  // Year 0 does not exist for PostgreSQL.
  if (year < 1) return false;
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}
