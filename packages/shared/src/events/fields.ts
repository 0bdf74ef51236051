import { z } from 'zod';

/** Non-empty text: ids, statuses and the like. */
export const text = z.string().min(1, 'must not be empty');

/** ISO 8601 date-time with a zone (`Z` or an offset), as `timestamp` requires. */
export const zonedDateTime = z.iso
  .datetime({
    offset: true,
    error: 'must be an ISO 8601 date-time with a zone (Z or an offset)',
  })
  .describe('ISO 8601 date-time with a zone: `Z` or an offset such as `+02:00`');

/** ISO 8601 date (`2026-12-31`) or date-time (`2026-12-31T23:59:59Z`). */
export const dateOrDateTime = z
  .union([z.iso.date(), z.iso.datetime({ offset: true, local: true })], {
    error: 'must be an ISO 8601 date or date-time',
  })
  .describe('ISO 8601 date (`2026-12-31`) or date-time (`2026-12-31T23:59:59Z`)');

/** Money as a decimal string with exactly two fraction digits: `"1249.90"`. */
export const decimalAmount = z
  .string()
  .regex(/^-?(0|[1-9]\d*)\.\d{2}$/, 'must be a decimal string with exactly two fraction digits')
  .describe('Decimal string with exactly two fraction digits, such as `"1249.90"`');

/** HMAC signature as received; verified against the secrets before the schema runs. */
export const signature = z
  .string()
  .describe(
    '`sha256=` and the lowercase hex HMAC-SHA256, keyed with a secret from WEBHOOK_SECRETS, of the ' +
      'event without its `signature` member as JSON with no whitespace: keys sorted (RFC 8785) or ' +
      'in the order sent. A missing or wrong signature gets 401 before the schema is looked at.',
  );

/** `previous_status` is absent or null when an entity is created. */
export const previousStatus = z
  .string()
  .nullish()
  .describe('The status before this change; absent or null when the entity was just created');
