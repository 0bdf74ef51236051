import type { Response } from 'express';
import { PwError } from '@pw/shared';
import type { ErrorBody } from '@pw/shared';

/** The contract's status code for each error code: the one place they are mapped. */
export const STATUS_BY_CODE = {
  invalid_json: 400,
  invalid_signature: 401,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof STATUS_BY_CODE;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** A refusal of a request, with the contract's code and the fields at fault. */
export class RequestRejected extends PwError {
  override name = 'RequestRejected';
  declare readonly code: ErrorCode;

  constructor(
    code: ErrorCode,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(code, message);
  }
}

/** Seconds a sender should wait before retrying after a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Writes `{ received: false, error }` with the status its code maps to. */
export function sendError(res: Response, rejection: RequestRejected): void {
  const status = STATUS_BY_CODE[rejection.code];
  if (status === 503) res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  res.locals.outcome = rejection.code;
  const body: ErrorBody = {
    received: false,
    error: { code: rejection.code, message: rejection.message, details: [...rejection.details] },
  };
  res.status(status).json(body);
}
