/**
 * Every error the system raises on purpose: a stable `code` (an exported constant of the module
 * that throws it) that callers and tests match on. Neither permanent nor retryable: the caller
 * decides (bad configuration, a wait that timed out).
 */
export class PwError extends Error {
  override name = 'PwError';
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A failure that will not go away by trying again (bad input, a 4xx from the partner API). */
export class PermanentError extends PwError {
  override name = 'PermanentError';
}

/**
 * A failure worth retrying later (Redis unavailable, a 5xx, a network error); `retryAfterMs`:
 * how long the other side asked us to wait (`Retry-After`), when it said.
 */
export class RetryableError extends PwError {
  override name = 'RetryableError';
  readonly retryAfterMs: number | undefined;

  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(code, message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The code of a misuse `TypeError`: an argument no caller should pass (a bug, not bad input). */
export const INVALID_ARGUMENT = 'invalid_argument';

/** A misuse, as oauth4webapi reports one: a `TypeError` with `code` `INVALID_ARGUMENT`. */
export function invalidArgument(message: string): TypeError & { code: typeof INVALID_ARGUMENT } {
  return Object.assign(new TypeError(message), { code: INVALID_ARGUMENT } as const);
}
