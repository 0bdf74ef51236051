import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './redis-server.js';
import { redisAnswers } from './redis-probe.js';
import { testRedisUrl } from './test-redis.js';

describe('redisAnswers', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.close();
  });

  it("is true for the tests' Redis", async () => {
    const url = new URL(testRedisUrl());
    expect(await redisAnswers(url.hostname, Number(url.port || 6379))).toBe(true);
  });

  it('is false where nothing listens', async () => {
    expect(await redisAnswers('127.0.0.1', await freePort())).toBe(false);
  });

  it('is false for a listener that is not Redis, whether it answers or stays silent', async () => {
    for (const answer of ['HTTP/1.1 400 Bad Request\r\n\r\n', undefined]) {
      server = createServer((socket) => {
        if (answer) socket.end(answer);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as { port: number };
      expect(await redisAnswers('127.0.0.1', port, 300)).toBe(false);
      server.close();
    }
  });
});
