import type { Request, RequestHandler } from 'express';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

/** A body is on its way: chunked, or a length above zero (an empty POST carries none). */
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * Refuses a request body of any type but `application/json` with 415 `unsupported_media_type`.
 * Forms and `text/plain` are what a cross-site page can send without a CORS preflight, so the API
 * never reads them, even as an empty object.
 */
export function jsonBodiesOnly(): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req) || req.is('application/json')) return next();
    sendError(
      res,
      415,
      DASHBOARD_ERROR_CODES.unsupportedMediaType,
      'Request bodies must be application/json',
    );
  };
}
