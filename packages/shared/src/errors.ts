import type { ErrorCode } from './events/error-codes.js';

/**
 * The code table: every code an error raised on purpose carries, and what it says. Logs, callers
 * and tests match on codes, and a `PwError` with a code outside the table does not compile. The
 * refusals the ingress and the dashboard answer with have tables of their own, with their HTTP
 * statuses (`ERROR_CODES` in events/error-codes.ts, the dashboard's `DASHBOARD_ERROR_CODES`).
 */
export const FAILURE_CODES = {
  invalid_argument: 'a misuse: an argument no caller should pass (a bug, not bad input)',
  invalid_config: 'a setting is missing or invalid; the process does not start',
  invalid_redis_url: 'REDIS_URL is not a Redis address',
  invalid_lua_script:
    'a Lua script file is missing, includes itself, or leaves a placeholder unknown or unreplaced',
  token_request_failed:
    'no token: the identity provider did not answer, or answered without an OAuth error',
  outcome_wait_timed_out: 'the outcome was not as awaited in time',
  invalid_cursor: "a page cursor of the record store's lists is malformed",
  invalid_time: 'a time filter is not an ISO 8601 time, or `to` is before `from`',
  migration_changed: 'a migration the record store applied has changed since',
  schema_missing: 'the record store has no schema',
  missing_field: 'the event has no value for a field the action needs',
  invalid_path_value: "an event's value cannot be a segment of the partner API's path",
  network_error: 'no answer from the partner API (refused, reset, timed out)',
  unexpected_error: "an error raised without a code (a bug, a client library's error)",
  unclean_shutdown: 'an ingress process did not stop cleanly',
  metrics_unavailable: "the ingress's primary process gave no metrics",
  partition_count_changed:
    'QUEUE_PARTITIONS is not the partition count stored in Redis (or the partitions command found work under it); only `npm run partitions` changes the count',
} as const satisfies Record<string, string>;

/** A code of the table. */
export type FailureCode = keyof typeof FAILURE_CODES;

/** The partner API's refusal or failure, by its HTTP status: `http_404`, `http_503`. */
export type HttpFailureCode = `http_${number}`;

/**
 * Every code a `PwError` may carry: the table's, the partner's HTTP failures, and the ingress's
 * refusals (an intake that Redis did not confirm is `unavailable`, as its answer says).
 */
export type PwErrorCode = FailureCode | HttpFailureCode | ErrorCode;

/**
 * Every error the system raises on purpose: a stable `code` of the code table (an exported constant
 * of the module that throws it names it) that callers and tests match on. Neither permanent nor
 * retryable: the caller decides (bad configuration, a wait that timed out). A subclass with codes
 * of its own (the dashboard's refusals, the identity provider's OAuth errors) narrows `Code`.
 */
export class PwError<Code extends string = PwErrorCode> extends Error {
  override name = 'PwError';
  readonly code: Code;

  // NoInfer: a code never widens the type to itself; `Code` is the table's unless a subclass says.
  constructor(code: NoInfer<Code>, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The code of an error raised on purpose, whatever its table; undefined for any other error
 * (`instanceof PwError` alone cannot say which table a code came from).
 */
export const codeOf = (error: unknown): string | undefined =>
  error instanceof PwError ? (error as PwError<string>).code : undefined;

/** A failure that will not go away by trying again (bad input, a 4xx from the partner API). */
export class PermanentError<Code extends string = PwErrorCode> extends PwError<Code> {
  override name = 'PermanentError';
}

/**
 * A failure worth retrying later (Redis unavailable, a 5xx, a network error); `retryAfterMs`:
 * how long the other side asked us to wait (`Retry-After`), when it said.
 */
export class RetryableError<Code extends string = PwErrorCode> extends PwError<Code> {
  override name = 'RetryableError';
  readonly retryAfterMs: number | undefined;

  constructor(
    code: NoInfer<Code>,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(code, message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The code of a misuse `TypeError`: an argument no caller should pass (a bug, not bad input). */
export const INVALID_ARGUMENT = 'invalid_argument' satisfies FailureCode;

/** A misuse, as oauth4webapi reports one: a `TypeError` with `code` `INVALID_ARGUMENT`. */
export function invalidArgument(message: string): TypeError & { code: typeof INVALID_ARGUMENT } {
  return Object.assign(new TypeError(message), { code: INVALID_ARGUMENT } as const);
}
