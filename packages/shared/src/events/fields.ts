import { z } from 'zod';

/** Non-empty text: ids, statuses and the like. */
export const text = z.string().min(1, 'must not be empty');

/** ISO 8601 date-time with a zone (`Z` or an offset), as `timestamp` requires. */
export const zonedDateTime = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 date-time with a zone (Z or an offset)',
});

/** ISO 8601 date (`2026-12-31`) or date-time (`2026-12-31T23:59:59Z`). */
export const dateOrDateTime = z.union(
  [z.iso.date(), z.iso.datetime({ offset: true, local: true })],
  {
    error: 'must be an ISO 8601 date or date-time',
  },
);

/** Money as a decimal string with exactly two fraction digits: `"1249.90"`. */
export const decimalAmount = z
  .string()
  .regex(/^-?(0|[1-9]\d*)\.\d{2}$/, 'must be a decimal string with exactly two fraction digits');

/** HMAC signature as received; verified against the secrets before the schema runs. */
export const signature = z.string();

/** `previous_status` is absent or null when an entity is created. */
export const previousStatus = z.string().nullish();
