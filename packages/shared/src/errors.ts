/** Every error the system raises on purpose: a stable `code` that callers and tests match on. */
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

/** A failure worth retrying later (Redis unavailable, a 5xx, a network error). */
export class RetryableError extends PwError {
  override name = 'RetryableError';
}
