import type { RequestHandler } from 'express';

/**
 * `Cache-Control: no-store` on every answer from here on: what an operator sees behind basic auth
 * stays out of browser and proxy caches. Static files keep it too, as `send` (behind
 * `express.static` and `res.sendFile`) only sets its own `Cache-Control` when none is set.
 */
export function noStore(): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
}
