import { PermanentError, RetryableError } from '@pw/shared';
import type { TokenManager } from '@pw/shared';
import type { PartnerTarget } from './config.js';

/** A retryable failure that may say how long to wait (`Retry-After`). */
export class CallFailed extends RetryableError {
  override name = 'CallFailed';
  constructor(
    code: string,
    message: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

export interface PartnerCall {
  method: string;
  path: string;
  body: unknown;
  /** `<webhook_id>:<action>`: the same on every retry and replay. */
  idempotencyKey: string;
  signal?: AbortSignal;
}

export interface PartnerResponse {
  status: number;
  body: unknown;
}

export interface PartnerApiSettings {
  tokens: TokenManager;
  /** @defaultValue 10000 */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Seconds or an HTTP date, as `Retry-After` allows; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const RETRYABLE = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Calls the partner API with a bearer token: 2xx is done; 408, 429, 5xx and network errors are
 * retryable (honouring `Retry-After`); other 4xx are permanent; a 401 drops the token and tries
 * once more with a new one.
 */
export class PartnerApi {
  private readonly fetch: typeof fetch;

  constructor(private readonly settings: PartnerApiSettings) {
    this.fetch = settings.fetch ?? globalThis.fetch;
  }

  /** How long one call may take before it is abandoned. */
  get timeoutMs(): number {
    return this.settings.timeoutMs ?? 10_000;
  }

  async call(target: PartnerTarget, call: PartnerCall): Promise<PartnerResponse> {
    const url = `${target.baseUrl.replace(/\/+$/, '')}${call.path}`;
    for (let authRetry = 0; ; authRetry++) {
      const token = await this.settings.tokens.getToken(target.credentials);
      const response = await this.send(url, call, token);
      const text = await response.text().catch(() => '');
      if (response.ok) return { status: response.status, body: parseBody(text) };
      if (response.status === 401 && authRetry === 0) {
        this.settings.tokens.invalidate(target.credentials, token);
        continue;
      }
      const message = `${call.method} ${call.path} answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
      if (RETRYABLE(response.status)) {
        throw new CallFailed(
          `http_${response.status}`,
          message,
          retryAfterMs(response.headers.get('retry-after')),
        );
      }
      throw new PermanentError(`http_${response.status}`, message);
    }
  }

  private async send(url: string, call: PartnerCall, token: string): Promise<Response> {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs ?? 10_000);
    try {
      return await this.fetch(url, {
        method: call.method,
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': call.idempotencyKey,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: call.method === 'GET' ? undefined : JSON.stringify(call.body),
        signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
      });
    } catch (error) {
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      throw new CallFailed(
        'network_error',
        `${call.method} ${call.path} failed: ${reason}`,
        undefined,
        { cause: error },
      );
    }
  }
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}
