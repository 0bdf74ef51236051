import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { PermanentError, RetryableError } from '@pw/shared/runtime';
import { headOf, tailOf } from '@pw/shared/outcomes';
import type { TokenManager } from '@pw/shared/auth';
import type { FailureCode, HttpFailureCode } from '@pw/shared/runtime';
import type { PartnerTarget } from './config.js';

/** The call did not get an answer: no connection, a reset, a time-out (retryable). */
export const NETWORK_ERROR = 'network_error' satisfies FailureCode;

/** The code of an answer other than 2xx: `http_503` (retryable) or `http_400` (permanent). */
export const httpErrorCode = (status: number): HttpFailureCode => `http_${status}`;

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
  /** Connections kept open per partner-API origin. @defaultValue 64 */
  connections?: number;
}

/** The longest `Retry-After` honoured: a partner asking for longer waits one hour. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Seconds or an HTTP date, as `Retry-After` allows, at most `MAX_RETRY_AFTER_MS`; undefined when
 * absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
  return Number.isNaN(wait) ? undefined : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, wait));
}

/** The path as a message shows it: a long one (an id-derived path can be huge) cut in the middle. */
export function shownPath(path: string): string {
  return path.length > 120 ? `${headOf(path, 80)}…${tailOf(path, 40)}` : path;
}

const RETRYABLE = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Calls the partner API with a bearer token: 2xx is done; 408, 429, 5xx and network errors throw
 * a `RetryableError` (with the `Retry-After` delay as `retryAfterMs`); other 4xx throw a
 * `PermanentError`; a 401 drops the token and tries once more with a new one.
 */
export class PartnerApi {
  /** undici's request over a keep-alive pool: much less work per call than `fetch`. */
  private readonly agent: Agent;

  constructor(private readonly settings: PartnerApiSettings) {
    this.agent = new Agent({
      connections: settings.connections ?? 64,
      keepAliveTimeout: 30_000,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  /** Closes the kept-alive connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** How long one call may take before it is abandoned. */
  get timeoutMs(): number {
    return this.settings.timeoutMs ?? 10_000;
  }

  async call(target: PartnerTarget, call: PartnerCall): Promise<PartnerResponse> {
    const url = `${target.baseUrl.replace(/\/+$/, '')}${call.path}`;
    for (let authRetry = 0; ; authRetry++) {
      const token = await this.settings.tokens.getToken(target.credentials);
      const deadline = callDeadline(this.timeoutMs, call.signal);
      let status: number;
      let text: string;
      let retryAfter: string | string[] | undefined;
      try {
        const response = await this.send(url, call, token, deadline.signal);
        status = response.statusCode;
        text = await readAtMost(response.body, MAX_ANSWER_BYTES);
        retryAfter = response.headers['retry-after'];
      } finally {
        deadline.clear();
      }
      if (status >= 200 && status < 300) return { status, body: parseBody(text) };
      if (status === 401 && authRetry === 0) {
        this.settings.tokens.invalidate(target.credentials, token);
        continue;
      }
      const message = `${call.method} ${shownPath(call.path)} answered ${status}${text ? `: ${headOf(text, 200)}` : ''}`;
      if (RETRYABLE(status)) {
        throw new RetryableError(httpErrorCode(status), message, {
          retryAfterMs: retryAfterMs(typeof retryAfter === 'string' ? retryAfter : null),
        });
      }
      throw new PermanentError(httpErrorCode(status), message);
    }
  }

  private async send(
    url: string,
    call: PartnerCall,
    token: string,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    try {
      return await request(url, {
        dispatcher: this.agent,
        method: call.method,
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': call.idempotencyKey,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: call.method === 'GET' ? undefined : JSON.stringify(call.body),
        signal,
      });
    } catch (error) {
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      throw new RetryableError(
        NETWORK_ERROR,
        `${call.method} ${shownPath(call.path)} failed: ${reason}`,
        { cause: error },
      );
    }
  }
}

/**
 * The signal of one call: aborted after `ms` (its answer's body included), or with `outer` (the
 * job's, when the worker stops). `clear()` when the call is over: unlike `AbortSignal.timeout`,
 * whose timer and signal live until it fires (at a thousand calls a second, some ten thousand
 * objects the garbage collector copies, and slow young-generation collections), nothing is left.
 */
export function callDeadline(
  ms: number,
  outer?: AbortSignal,
): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * The most of an answer's body the worker reads: an error keeps its first 200 characters, and a
 * success's body is not used, so a partner answering megabytes costs the worker no more memory.
 */
export const MAX_ANSWER_BYTES = 65_536;

/** The first `max` bytes of `body`, as text; the rest is not read (the connection is closed). */
async function readAtMost(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      // Leaving the loop destroys the body: what the partner sends after is never read.
      if (size >= max) break;
    }
  } catch {
    // An answer cut short: what came is enough.
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}
