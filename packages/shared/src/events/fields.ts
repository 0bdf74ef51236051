import { z } from 'zod';

/** Non-empty text: statuses and the like. */
export const text = z.string().min(1, 'must not be empty');

/** The most characters (Unicode code points) an identifier may have. */
export const IDENTIFIER_MAX_LENGTH = 256;

/**
 * An identifier (an entity id, `customer_id`, a reference code, ...): 1-256 characters, none of
 * them a control character. Bounded so that no id can outgrow an index entry of the record store
 * or a Redis key, and free of control characters so that it reads the same in every log and page.
 * Lengths count code points (the regex's `u` flag), not UTF-16 units.
 */
export const identifier = z
  .string()
  .min(1, 'must not be empty')
  .regex(
    new RegExp(`^[\\s\\S]{0,${IDENTIFIER_MAX_LENGTH}}$`, 'u'),
    `must be at most ${IDENTIFIER_MAX_LENGTH} characters`,
  )
  .regex(/^\P{Cc}*$/u, 'must not contain control characters')
  // JSON Schema's maxLength counts code points too: the OpenAPI document states the bound plainly.
  .meta({
    maxLength: IDENTIFIER_MAX_LENGTH,
    description: `Identifier: 1-${IDENTIFIER_MAX_LENGTH} characters, no control characters`,
  });

/**
 * The path of the first string (a value or a key) anywhere in `value` holding U+0000, which
 * PostgreSQL's text and jsonb cannot store; undefined when there is none.
 */
export function nulPath(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    const at = [...path, Array.isArray(value) ? Number(key) : key];
    if (key.includes('\0')) return at;
    const found = nulPath(member, at);
    if (found) return found;
  }
  return undefined;
}

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
