import { identifier, validationProblems } from '@pw/shared/events';
import { eventTime } from '@pw/shared/queue';
import { canonicalJson, isWellFormed, verifyEvent, withoutSignature } from '@pw/shared/signing';
import type { EventDefinition, Problem } from '@pw/shared/events';
import { RequestRejectedError } from './error-response.js';
import { JSON_SHAPE_LIMITS, screenJson } from './screen-json.js';

export interface ParseSettings {
  webhookSecrets: readonly string[];
  signatureMode: 'required' | 'off';
  /** How far `timestamp` may lie ahead of this clock (`MAX_CLOCK_SKEW_SECONDS`). */
  maxClockSkewSeconds: number;
  /** How far back `timestamp` may lie (`DEDUP_WINDOW_SECONDS`). */
  dedupWindowSeconds: number;
  /**
   * What an authentic event that fails its schema gets (`INVALID_EVENTS`): kept, quarantined, or
   * refused 422. @defaultValue 'reject'
   */
  invalidEvents?: 'quarantine' | 'reject';
}

export interface ParsedWebhook {
  /** The event without `signature`, keys in the order received. */
  event: Record<string, unknown>;
  canonical: string;
  /** Its entity id; for a quarantined event, the id field's value as text, '' without one. */
  entityId: string;
  /** Present when the event failed its schema and is to be quarantined: why. */
  problems?: Problem[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown) =>
  Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;

/**
 * What JSON.parse accepts but no canonical form has (RFC 8785): a number that overflowed to
 * Infinity, a lone surrogate in a string or a key. Found by one walk over a value whose size and
 * depth the screen has already bounded.
 */
function unserialisable(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'a number overflows';
  if (typeof value === 'string') return isWellFormed(value) ? undefined : 'a lone surrogate';
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    if (!isWellFormed(key)) return 'a lone surrogate in a key';
    const problem = unserialisable(member);
    if (problem) return problem;
  }
  return undefined;
}

/** The body as JSON: 413 past the shape limits (before parsing), 400 when it is not JSON. */
function readJson(body: Buffer): unknown {
  const shape = screenJson(body);
  if (!shape.ok) {
    throw new RequestRejectedError(
      'payload_too_large',
      shape.reason === 'values'
        ? `The body has more than ${JSON_SHAPE_LIMITS.maxValues} JSON values`
        : `The body is nested deeper than ${JSON_SHAPE_LIMITS.maxDepth} levels`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new RequestRejectedError(
      'invalid_json',
      `The body is not valid JSON: ${(error as Error).message}`,
    );
  }
  const problem = unserialisable(value);
  if (problem) {
    throw new RequestRejectedError(
      'invalid_json',
      `The body has no canonical JSON form: ${problem}`,
    );
  }
  return value;
}

/** 422 `timestamp_out_of_range` unless the event's time lies within the freshness window. */
function checkFreshness(time: number, settings: ParseSettings, now: number): void {
  const ahead = time - now;
  if (ahead > settings.maxClockSkewSeconds * 1000) {
    throw new RequestRejectedError(
      'timestamp_out_of_range',
      `The event's timestamp is more than ${settings.maxClockSkewSeconds} s ahead of the receiver's clock`,
      [
        {
          path: 'timestamp',
          message: `must not be later than ${new Date(now + settings.maxClockSkewSeconds * 1000).toISOString()}`,
        },
      ],
    );
  }
  if (-ahead > settings.dedupWindowSeconds * 1000) {
    throw new RequestRejectedError(
      'timestamp_out_of_range',
      `The event's timestamp is older than the ${settings.dedupWindowSeconds} s deduplication window`,
      [
        {
          path: 'timestamp',
          message: `must not be earlier than ${new Date(now - settings.dedupWindowSeconds * 1000).toISOString()}`,
        },
      ],
    );
  }
}

/**
 * A quarantined event's entity id as text: a string or number as it reads, when it could be an
 * identifier (1-256 characters, no control character: it is searched by, and indexed); '' for
 * anything else (its partition is then its canonical JSON's).
 */
function entityText(value: unknown): string {
  const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  return identifier.safeParse(text).success ? text : '';
}

/**
 * The checks after the body is read, in the contract's order: shape limits (413), JSON syntax
 * (400), an object (422), signature (401), schema (422, or quarantined: `problems`), freshness
 * (422). Throws a RequestRejectedError at the first that fails. Until the signature is verified, the work done is
 * bounded by the shape limits and is about one pass over the bytes per step.
 */
export function parseWebhook(
  body: Buffer,
  definition: EventDefinition,
  settings: ParseSettings,
  now = Date.now(),
): ParsedWebhook {
  const value = readJson(body);
  if (!isObject(value)) {
    throw new RequestRejectedError(
      'validation_failed',
      `The body must be a JSON object, not ${describe(value)}`,
      [{ path: '', message: 'expected a JSON object' }],
    );
  }
  // Each computed once, when first needed: by the signature check, else for deduplication. Not
  // before: a body with no signature to check is refused without copying its members.
  let event: Record<string, unknown> | undefined;
  const eventOf = () => (event ??= withoutSignature(value));
  let canonical: string | undefined;
  const canonicalOf = () => (canonical ??= canonicalJson(eventOf()));
  if (
    settings.signatureMode === 'required' &&
    !verifyEvent(value, settings.webhookSecrets, { unsigned: eventOf, canonical: canonicalOf })
  ) {
    throw new RequestRejectedError(
      'invalid_signature',
      typeof value.signature === 'string'
        ? 'The signature does not match the event under any configured secret'
        : 'The signature is missing',
    );
  }
  const checked = definition.schema.safeParse(
    settings.signatureMode === 'off' && value.signature === undefined
      ? { ...value, signature: '' }
      : value,
  );
  if (!checked.success) {
    const problems = validationProblems(checked.error);
    if (settings.invalidEvents !== 'quarantine') {
      throw new RequestRejectedError(
        'validation_failed',
        `The ${definition.type} event is not valid`,
        problems,
      );
    }
    // Kept, quarantined: judged by the freshness window now when its time reads at all, so that
    // no captured old event can be kept (and released) after its deduplication window.
    const time = eventTime(value);
    if (time !== undefined) checkFreshness(time, settings, now);
    return {
      event: eventOf(),
      canonical: canonicalOf(),
      entityId: entityText(value[definition.entityIdField]),
      problems,
    };
  }
  checkFreshness(Date.parse(value.timestamp as string), settings, now);
  return {
    event: eventOf(),
    canonical: canonicalOf(),
    entityId: String(value[definition.entityIdField]),
  };
}
