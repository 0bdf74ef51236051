import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Basic auth with a constant-time comparison (of digests, so lengths leak nothing either). */
export function basicAuth(user: string, password: string): RequestHandler {
  const expected = digest(`${user}:${password}`);
  return (req, res, next) => {
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Basic ')
      ? Buffer.from(header.slice(6), 'base64').toString('utf8')
      : '';
    if (given && timingSafeEqual(digest(given), expected)) {
      res.locals.user = given.slice(0, given.indexOf(':'));
      next();
      return;
    }
    res.setHeader('WWW-Authenticate', 'Basic realm="partner-webhooks dashboard", charset="UTF-8"');
    sendError(res, 401, DASHBOARD_ERROR_CODES.unauthorized, 'Credentials required');
  };
}
