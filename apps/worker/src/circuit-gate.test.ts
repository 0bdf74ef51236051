import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TokenManager } from '@pw/shared/auth';
import { PermanentError, RetryableError } from '@pw/shared/runtime';
import { circuitResult } from './circuit-gate.js';
import { httpErrorCode, NETWORK_ERROR } from './partner-api.js';

/** The error a real token manager raises against an identity provider answering like this. */
async function tokenErrorFrom(status: number, body: string, type: string): Promise<unknown> {
  const server = createServer((_req, res) =>
    res.writeHead(status, { 'content-type': type }).end(body),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    await new TokenManager({ attempts: 1 }).getToken({
      authUrl: `http://127.0.0.1:${port}`,
      realm: 'r',
      clientId: 'c',
      clientSecret: 's',
    });
    throw new Error('a token was granted');
  } catch (error) {
    return error;
  } finally {
    server.close();
  }
}

describe('what a failed try means for the circuit', () => {
  it('no answer, 408, 429 and 5xx from the partner are the target being unavailable', () => {
    expect(circuitResult(new RetryableError(NETWORK_ERROR, 'ECONNREFUSED'))).toBe('unavailable');
    for (const status of [408, 429, 500, 503]) {
      expect(circuitResult(new RetryableError(httpErrorCode(status), 'x'))).toBe('unavailable');
    }
  });

  it('another 4xx refuses that input: it says nothing of the target', () => {
    expect(circuitResult(new PermanentError(httpErrorCode(400), 'x'))).toBe('refused');
    expect(circuitResult(new PermanentError(httpErrorCode(404), 'x'))).toBe('refused');
  });

  it('no call made, or an error of unknown kind, says nothing about the target', () => {
    expect(circuitResult(new PermanentError('invalid_path_value', 'x'))).toBe('neutral');
    expect(circuitResult(new RetryableError('unexpected_error', 'x'))).toBe('neutral');
    expect(circuitResult(new Error('a bug'))).toBe('neutral');
  });

  it('an identity provider that is unreachable or answers 5xx makes the target unavailable; a refusal does not', async () => {
    const unreachable = await new TokenManager({ attempts: 1 })
      .getToken({ authUrl: 'http://127.0.0.1:9', realm: 'r', clientId: 'c', clientSecret: 's' })
      .catch((error: unknown) => error);
    expect(circuitResult(unreachable)).toBe('unavailable');
    expect(circuitResult(await tokenErrorFrom(503, '<h1>down</h1>', 'text/html'))).toBe(
      'unavailable',
    );
    expect(
      circuitResult(
        await tokenErrorFrom(503, '{"error":"temporarily_unavailable"}', 'application/json'),
      ),
    ).toBe('unavailable');
    expect(
      circuitResult(await tokenErrorFrom(500, '{"error":"invalid_request"}', 'application/json')),
    ).toBe('unavailable');
    expect(
      circuitResult(await tokenErrorFrom(401, '{"error":"invalid_client"}', 'application/json')),
    ).toBe('refused');
  });
});
