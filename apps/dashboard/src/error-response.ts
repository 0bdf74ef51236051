import type { Response } from 'express';
import { PwError } from '@pw/shared/runtime';
import type { Problem } from '@pw/shared/events';

/** The codes of the dashboard's error bodies; exported so that tests assert on them. */
export const DASHBOARD_ERROR_CODES = {
  unauthorized: 'unauthorized',
  tooManyLogins: 'too_many_logins',
  forbiddenOrigin: 'forbidden_origin',
  unsupportedMediaType: 'unsupported_media_type',
  notFound: 'not_found',
  badRequest: 'bad_request',
  invalidRules: 'invalid_rules',
  invalidEvent: 'invalid_event',
  invalidCircuitState: 'invalid_circuit_state',
  invalidQuery: 'invalid_query',
  storeUnavailable: 'store_unavailable',
  queueUnavailable: 'queue_unavailable',
  invalidRequest: 'invalid_request',
  stillInvalid: 'still_invalid',
  notQuarantined: 'not_quarantined',
  consoleNotBuilt: 'console_not_built',
  internalError: 'internal_error',
} as const;
export type DashboardErrorCode = (typeof DASHBOARD_ERROR_CODES)[keyof typeof DASHBOARD_ERROR_CODES];

/** Answers `{ error: { code, message, details } }`, the one error body of the dashboard's own routes. */
export function sendError(
  res: Response,
  status: number,
  code: DashboardErrorCode,
  message: string,
  details: readonly Problem[] = [],
): void {
  res.status(status).json({ error: { code, message, details } });
}

/**
 * A refusal or a failure with the answer it gets, thrown by what a route calls and answered by the
 * app's one error handler; `retryAfterSeconds` becomes `Retry-After`.
 */
export class DashboardError extends PwError<DashboardErrorCode> {
  override name = 'DashboardError';
  readonly details: readonly Problem[];
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly status: number,
    code: DashboardErrorCode,
    message: string,
    options: { cause?: unknown; details?: readonly Problem[]; retryAfterSeconds?: number } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.details = options.details ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Answers a `DashboardError`. */
export function sendDashboardError(res: Response, error: DashboardError): void {
  if (error.retryAfterSeconds !== undefined) {
    res.setHeader('Retry-After', String(error.retryAfterSeconds));
  }
  sendError(res, error.status, error.code, error.message, [...error.details]);
}
