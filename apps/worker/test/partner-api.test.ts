// The partner-API client's deadline: a call that gets no answer, or an answer that never ends, is
// given up on after the call's time-out, and the job's signal (the worker stopping) ends a call in
// flight. The partner here is a real HTTP server that misbehaves; tokens come from the sandbox's
// real OpenID provider.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenManager } from '@pw/shared/auth';
import { RetryableError } from '@pw/shared/runtime';
import { startSandbox } from '@pw/sandbox';
import { callDeadline, NETWORK_ERROR, PartnerApi } from '../src/partner-api.js';
import { sandboxTarget } from './harness.js';
import type { Sandbox } from './harness.js';

let sandbox: Sandbox;
let partner: Server;
let behave: (req: IncomingMessage, res: ServerResponse) => void;
/** Resolved with each request the partner receives. */
let received: Promise<IncomingMessage>;
let receive: (req: IncomingMessage) => void;
const open = new Set<ServerResponse>();

function expectRequest(): void {
  received = new Promise((resolve) => (receive = resolve));
}

beforeAll(async () => {
  sandbox = await startSandbox({ idpPort: 0, apiPort: 0 });
  partner = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    receive(req);
    behave(req, res);
  });
  partner.listen(0, '127.0.0.1');
  await once(partner, 'listening');
});

afterEach(() => {
  for (const res of open) res.destroy();
});

afterAll(async () => {
  partner.closeAllConnections();
  partner.close();
  await sandbox.stop();
});

/** The misbehaving partner, with the sandbox's identity provider for its tokens. */
const target = () =>
  sandboxTarget(sandbox, `http://127.0.0.1:${(partner.address() as AddressInfo).port}`);

const call = (signal?: AbortSignal) => ({
  method: 'POST',
  path: '/customers/c-1/notifications',
  body: { hello: 'partner' },
  idempotencyKey: 'wh_test:notify_customer',
  signal,
});

async function withApi<T>(timeoutMs: number, use: (api: PartnerApi) => Promise<T>): Promise<T> {
  const api = new PartnerApi({ tokens: new TokenManager({ retryDelayMs: 50 }), timeoutMs });
  try {
    return await use(api);
  } finally {
    await api.close();
  }
}

describe('the partner-API call', () => {
  it('reads no more than 64 KB of an answer, however much the partner sends: its error keeps the start', async () => {
    let sent = 0;
    const whole = 64 * 1024 * 1024;
    let finished: (bytes: number) => void;
    const stopped = new Promise<number>((resolve) => (finished = resolve));
    behave = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = () => {
        while (sent < whole && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        if (!res.destroyed) res.end();
      };
      res.on('close', () => finished(sent));
      more();
    };
    expectRequest();
    const error = await withApi(10_000, (api) =>
      api.call(target(), call()).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).message).toBe(
      `POST /customers/c-1/notifications answered 500: ${'x'.repeat(200)}`,
    );
    // The worker closed the line long before the partner's 64 MB were through.
    expect(await stopped).toBeLessThan(whole / 4);
  });

  it('gives up on a partner that never answers: a retryable network error', async () => {
    behave = () => undefined;
    expectRequest();
    const error = await withApi(300, (api) => api.call(target(), call()).catch((e: unknown) => e));
    await received;
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).code).toBe(NETWORK_ERROR);
  });

  it('cuts off an answer whose body never ends at the time-out, and reports its status', async () => {
    // Headers at once, then a byte every 50 ms: no pause is long enough for undici's own body
    // time-out, so only the call's deadline ends it.
    behave = (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    };
    const error = await withApi(400, (api) => api.call(target(), call()).catch((e: unknown) => e));
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).code).toBe('http_503');
  });

  it("ends a call in flight when the job's signal aborts (the worker stopping)", async () => {
    behave = () => undefined;
    expectRequest();
    const job = new AbortController();
    // A time-out far longer than the test may take: only the job's signal can end the call.
    const error = await withApi(600_000, async (api) => {
      const pending = api.call(target(), call(job.signal)).catch((e: unknown) => e);
      await received;
      job.abort(new Error('worker closing'));
      return pending;
    });
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).code).toBe(NETWORK_ERROR);
    expect((error as Error).message).toContain('worker closing');
  });

  it("completes on a 2xx with the partner's answer", async () => {
    behave = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"id":"n-1"}');
    };
    const response = await withApi(5000, (api) => api.call(target(), call()));
    expect(response).toEqual({ status: 201, body: { id: 'n-1' } });
  });
});

describe('callDeadline', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts after its time with a TimeoutError, and not at all once cleared', () => {
    vi.useFakeTimers();
    const running = callDeadline(1000);
    const cleared = callDeadline(1000);
    cleared.clear();
    vi.advanceTimersByTime(999);
    expect(running.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(running.signal.aborted).toBe(true);
    expect((running.signal.reason as Error).name).toBe('TimeoutError');
    expect(cleared.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("follows the job's signal until cleared, and lets go of it then", () => {
    const job = new AbortController();
    const following = callDeadline(60_000, job.signal);
    const done = callDeadline(60_000, job.signal);
    done.clear();
    job.abort(new Error('closing'));
    expect(following.signal.aborted).toBe(true);
    expect((following.signal.reason as Error).message).toBe('closing');
    expect(done.signal.aborted).toBe(false);
    following.clear();
  });

  it("is aborted from the start when the job's signal already is", () => {
    const job = new AbortController();
    job.abort(new Error('closed'));
    const deadline = callDeadline(60_000, job.signal);
    expect(deadline.signal.aborted).toBe(true);
    deadline.clear();
  });
});
