import { describe, expect, it } from 'vitest';
import { createHttpServer, SERVER_TIMEOUTS } from './lifecycle.js';

describe('createHttpServer', () => {
  it('bounds headers to 10 s and a whole request to 30 s, checked every second', () => {
    // The ingress process test trickles headers and a body at a real server; the dashboard and
    // the worker's health port are built by this same function.
    const server = createHttpServer(() => undefined);
    expect(SERVER_TIMEOUTS).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(30_000);
  });
});
