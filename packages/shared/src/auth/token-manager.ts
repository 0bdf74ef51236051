import * as oidc from 'openid-client';
import { RetryableError } from '../errors.js';
import type { FailureCode } from '../errors.js';

/** Where and as whom to ask for a token. */
export interface ClientCredentials {
  /** The identity provider's host (`AUTH_URL`), e.g. `https://sso.example.com`. */
  authUrl: string;
  realm: string;
  clientId: string;
  clientSecret: string;
  /** @defaultValue `'openid'` */
  scope?: string;
}

export type TokenRequestOutcome = 'success' | 'failure';

export interface TokenManagerOptions {
  /** Injectable for tests. @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Milliseconds since the epoch. @defaultValue Date.now */
  now?: () => number;
  /** Tries per token request before giving up. @defaultValue 3 */
  attempts?: number;
  /** First retry delay; doubles each time. @defaultValue 200 */
  retryDelayMs?: number;
  /** Each request's timeout in seconds. @defaultValue 10 */
  timeoutSeconds?: number;
  /** Told of every token request, for metrics. */
  onRequest?: (outcome: TokenRequestOutcome, credentials: ClientCredentials) => void;
}

/** The code of a `TokenError` when the IdP gave no `error` of its own (no answer, a bad one). */
export const TOKEN_REQUEST_FAILED = 'token_request_failed' satisfies FailureCode;

/**
 * A `TokenError`'s code: `TOKEN_REQUEST_FAILED`, or the identity provider's own OAuth `error`,
 * kept as it gave it. RFC 6749 names some (`invalid_client`, `invalid_grant`, `server_error`,
 * `temporarily_unavailable`, ...) and lets a provider add its own, so the set is open.
 */
export type TokenErrorCode = string;

/**
 * Token request failed after its retries; `code` is the IdP's OAuth `error` when it gave one,
 * otherwise `TOKEN_REQUEST_FAILED`.
 */
export class TokenError extends RetryableError<TokenErrorCode> {
  override name = 'TokenError';
  /** The identity provider's HTTP status, when it answered. */
  readonly status: number | undefined;

  constructor(
    code: TokenErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(code, message, options);
    this.status = options?.status;
  }
}

interface CachedToken {
  accessToken: string;
  /** When to fetch a new one: min(30 s, 10% of its lifetime) before it expires. */
  renewAt: number;
}

const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

/** The Keycloak token endpoint of a realm. */
export const tokenEndpoint = (authUrl: string, realm: string): string =>
  `${authUrl.replace(/\/+$/, '')}/realms/${encodeURIComponent(realm)}/protocol/openid-connect/token`;

/**
 * Obtains client-credentials access tokens and keeps them fresh: one cached token per
 * (auth URL, realm, client), renewed before it runs out; concurrent callers share one request.
 * The client secret goes only into the token request's body.
 */
export class TokenManager {
  private readonly cache = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();
  private readonly configs = new Map<string, oidc.Configuration>();
  private readonly now: () => number;

  constructor(private readonly options: TokenManagerOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** A valid access token for `credentials`, from the cache when it has one. */
  async getToken(credentials: ClientCredentials): Promise<string> {
    const key = cacheKey(credentials);
    const cached = this.cache.get(key);
    if (cached && this.now() < cached.renewAt) return cached.accessToken;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.request(credentials).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return (await pending).accessToken;
  }

  /** Drops the cached token (the API answered 401), unless a newer one replaced it already. */
  invalidate(credentials: ClientCredentials, token?: string): void {
    const key = cacheKey(credentials);
    if (token === undefined || this.cache.get(key)?.accessToken === token) this.cache.delete(key);
  }

  private async request(credentials: ClientCredentials): Promise<CachedToken> {
    const attempts = this.options.attempts ?? 3;
    let delay = this.options.retryDelayMs ?? 200;
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const startedAt = this.now();
      try {
        const response = await oidc.clientCredentialsGrant(this.configFor(credentials), {
          scope: credentials.scope ?? 'openid',
        });
        this.options.onRequest?.('success', credentials);
        const lifetimeMs = (response.expires_in ?? 300) * 1000;
        const token: CachedToken = {
          accessToken: response.access_token,
          renewAt: startedAt + lifetimeMs - Math.min(30_000, lifetimeMs / 10),
        };
        this.cache.set(cacheKey(credentials), token);
        return token;
      } catch (error) {
        this.options.onRequest?.('failure', credentials);
        lastError = error;
        if (attempt < attempts) {
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay *= 2;
        }
      }
    }
    throw toTokenError(lastError, credentials);
  }

  private configFor(credentials: ClientCredentials): oidc.Configuration {
    const key = cacheKey(credentials);
    let config = this.configs.get(key);
    if (!config) {
      const issuer = `${credentials.authUrl.replace(/\/+$/, '')}/realms/${encodeURIComponent(credentials.realm)}`;
      config = new oidc.Configuration(
        { issuer, token_endpoint: tokenEndpoint(credentials.authUrl, credentials.realm) },
        credentials.clientId,
        undefined,
        oidc.ClientSecretPost(credentials.clientSecret),
      );
      config.timeout = this.options.timeoutSeconds ?? 10;
      if (this.options.fetch) config[oidc.customFetch] = this.options.fetch;
      // Plain http is for loopback and development only; config validation refuses it in production.
      if (new URL(credentials.authUrl).protocol === 'http:') oidc.allowInsecureRequests(config);
      this.configs.set(key, config);
    }
    return config;
  }
}

function cacheKey(credentials: ClientCredentials): string {
  return JSON.stringify([credentials.authUrl, credentials.realm, credentials.clientId]);
}

/** Converts openid-client's errors at the boundary, keeping the IdP's own words. */
function toTokenError(error: unknown, credentials: ClientCredentials): TokenError {
  const where = `${credentials.realm}/${credentials.clientId}`;
  if (error instanceof oidc.ResponseBodyError) {
    const description = error.error_description ? `: ${error.error_description}` : '';
    return new TokenError(
      error.error,
      `token request for ${where} refused: ${error.error}${description}`,
      { cause: error, status: error.status },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TokenError(TOKEN_REQUEST_FAILED, `token request for ${where} failed: ${message}`, {
    cause: error,
  });
}

/** True for an `http://` address the contract allows outside production: loopback hosts. */
export const isLoopbackUrl = (url: string): boolean => loopback.test(new URL(url).hostname);
