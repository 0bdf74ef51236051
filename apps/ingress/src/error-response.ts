import type { Response } from 'express';
import { ERROR_CODES, UNAVAILABLE_RETRY_AFTER_SECONDS } from '@pw/shared/events';
import { PwError } from '@pw/shared/runtime';
import type { ErrorBody, ErrorCode, Problem } from '@pw/shared/events';

/** A refusal of a request, with the contract's code and the fields at fault. */
export class RequestRejectedError extends PwError<ErrorCode> {
  override name = 'RequestRejectedError';

  constructor(
    code: ErrorCode,
    message: string,
    readonly details: readonly Problem[] = [],
  ) {
    super(code, message);
  }
}

/** Writes `{ received: false, error }` with the status its code maps to. */
export function sendError(res: Response, rejection: RequestRejectedError): void {
  const { status } = ERROR_CODES[rejection.code];
  if (status === 503) res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  // A 503 is no refusal: the event may have reached the queue, and the sender retries it.
  res.locals.outcome = status === 503 ? 'unconfirmed' : rejection.code;
  const body: ErrorBody = {
    received: false,
    error: { code: rejection.code, message: rejection.message, details: [...rejection.details] },
  };
  res.status(status).json(body);
}
