import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '@pw/shared/runtime';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';
import type { LoginLimit, LoginVerdict } from './login-limit.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** What basic auth needs besides the account: the failed-login limit, and where to say it refused. */
export interface LoginGuard {
  limit: Pick<LoginLimit, 'attempt'>;
  log: Logger;
}

/**
 * The client's address as Express gives it: the connection's, unless `trust proxy` is set, then
 * the one the trusted proxies name in `X-Forwarded-For`.
 */
const clientAddress = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** The longest text of an IP address: an IPv6 address with an IPv4 tail. */
const LONGEST_ADDRESS = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255'.length;

/**
 * Whether `address` is one: what a trusted proxy's `X-Forwarded-For` names is text a client may
 * have written (a dashboard reachable past its proxies); the limit keeps a count per address, so
 * only an IP address, no longer than an IPv6 address, gets one.
 */
const isAddress = (address: string) => address.length <= LONGEST_ADDRESS && isIP(address) !== 0;

/**
 * Basic auth with a constant-time comparison (of digests, so lengths leak nothing either), and a
 * limit on failed logins per client address (`LoginLimit`): past it, 429 `too_many_logins` with
 * `Retry-After` for every request from that address, the right password included, each refusal
 * logged. A request with an `Authorization` header that does not match is a failed login; one
 * without (a browser's first request, before it asks for the password) is not.
 */
export function basicAuth(user: string, password: string, guard: LoginGuard): RequestHandler {
  const expected = digest(`${user}:${password}`);
  return async (req, res, next) => {
    const header = req.headers.authorization;
    const given = header?.startsWith('Basic ')
      ? Buffer.from(header.slice(6), 'base64').toString('utf8')
      : '';
    const valid = given !== '' && timingSafeEqual(digest(given), expected);
    const address = clientAddress(req);
    if (!isAddress(address)) {
      guard.log.warn({ method: req.method, path: req.path }, 'login refused: no client address');
      return sendError(
        res,
        400,
        DASHBOARD_ERROR_CODES.invalidRequest,
        'X-Forwarded-For names no IP address at the trusted hop',
      );
    }
    const verdict = await guard.limit
      .attempt(address, header !== undefined && !valid)
      .catch((error: unknown): LoginVerdict => {
        // Redis away: the limit cannot be kept, and the password still is.
        guard.log.warn({ err: error, address }, 'failed-login limit unavailable');
        return { allowed: true };
      });
    if (!verdict.allowed) {
      const { retryAfterSeconds } = verdict;
      guard.log.warn(
        { address, retry_after_seconds: retryAfterSeconds, method: req.method, path: req.path },
        'login refused: too many failed logins from this address',
      );
      res.setHeader('Retry-After', String(retryAfterSeconds));
      return sendError(
        res,
        429,
        DASHBOARD_ERROR_CODES.tooManyLogins,
        `Too many failed logins from this address: try again in ${retryAfterSeconds} s`,
      );
    }
    if (valid) {
      res.locals.user = given.slice(0, given.indexOf(':'));
      return next();
    }
    res.setHeader('WWW-Authenticate', 'Basic realm="partner-webhooks dashboard", charset="UTF-8"');
    sendError(res, 401, DASHBOARD_ERROR_CODES.unauthorized, 'Credentials required');
  };
}
