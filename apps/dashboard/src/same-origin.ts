import type { Request, RequestHandler } from 'express';
import { invalidArgument } from '@pw/shared/runtime';
import { DASHBOARD_ERROR_CODES, sendError } from './error-response.js';

/** Methods that change nothing, so a cross-site page gains nothing by sending them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `scheme://host[:port]` normalised (lower case, default port dropped); undefined if unparsable. */
function originOf(address: string): string | undefined {
  try {
    const { origin } = new URL(address);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** The origin the request reached: its scheme and its `Host` header. */
const reachedOrigin = (req: Request): string | undefined => {
  const host = req.headers.host;
  return host ? originOf(`${req.protocol}://${host}`) : undefined;
};

/**
 * Refuses cross-site requests that could change something (docs/operations.md): a method other
 * than GET/HEAD/OPTIONS gets 403 `forbidden_origin` when `Sec-Fetch-Site` is `cross-site`, or when
 * an `Origin` header is present and is not the dashboard's own origin. That origin is the one of
 * `publicUrl` when given (a dashboard behind a proxy, where the scheme and `Host` seen here are the
 * proxy's), otherwise the scheme and `Host` the request reached. Browsers attach cached basic-auth
 * credentials to cross-site requests too, so the credentials alone prove nothing about the page.
 */
export function sameOrigin(publicUrl?: string): RequestHandler {
  const publicOrigin = publicUrl === undefined ? undefined : originOf(publicUrl);
  if (publicUrl !== undefined && publicOrigin === undefined) {
    throw invalidArgument(
      `sameOrigin: ${publicUrl} has no origin (an absolute http(s) address is needed)`,
    );
  }
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.headers.origin;
    const crossSite = req.headers['sec-fetch-site'] === 'cross-site';
    const own = publicOrigin ?? reachedOrigin(req);
    if (!crossSite && (origin === undefined || (own !== undefined && originOf(origin) === own))) {
      return next();
    }
    sendError(
      res,
      403,
      DASHBOARD_ERROR_CODES.forbiddenOrigin,
      'Cross-site requests are refused: send it from the dashboard itself',
    );
  };
}
