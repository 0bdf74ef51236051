import type { Response } from 'express';

/** The codes of the dashboard's error bodies; exported so that tests assert on them. */
export const DASHBOARD_ERROR_CODES = {
  unauthorized: 'unauthorized',
  forbiddenOrigin: 'forbidden_origin',
  unsupportedMediaType: 'unsupported_media_type',
  notFound: 'not_found',
  badRequest: 'bad_request',
  invalidRules: 'invalid_rules',
  invalidEvent: 'invalid_event',
  invalidCircuitState: 'invalid_circuit_state',
  invalidQuery: 'invalid_query',
  storeUnavailable: 'store_unavailable',
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
  details: unknown[] = [],
): void {
  res.status(status).json({ error: { code, message, details } });
}
