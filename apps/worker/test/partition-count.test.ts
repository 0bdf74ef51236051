import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '@pw/shared/queue';
import { ChildRun, freePort, redisPerTest, testRedisUrl } from '@pw/test-utils';

// The worker process refuses to start under another partition count than the one its Redis holds
// work under, in one line (docs/operations.md, changing the partition count).

const t = redisPerTest();

const worker = (env: Record<string, string>) =>
  ChildRun.tsx('apps/worker/src/main.ts', {
    QUEUE_PREFIX: t.prefix,
    QUEUE_PARTITIONS: '2',
    AUTH_URL: 'http://127.0.0.1:9',
    AUTH_REALM: 'realm',
    AUTH_CLIENT_ID: 'client',
    AUTH_CLIENT_SECRET: 'secret',
    API_BASE_URL: 'http://127.0.0.1:9',
    ...env,
  });

describe('the worker at start', { timeout: 60_000 }, () => {
  it('exits 1 with one line when QUEUE_PARTITIONS differs from the count work waits under', async () => {
    const queue = new Queue(QUEUE_NAMES.actions, { connection: t.redis, prefix: t.prefix });
    await queue.add('notify_customer', {}, { delay: 600_000 });
    await queue.close();
    const run = worker({ REDIS_URL: testRedisUrl(), WORKER_HEALTH_PORT: String(await freePort()) });
    expect(await run.exited).toBe(1);
    const fatal = run.output.split('\n').filter((line) => line.includes('QUEUE_PARTITIONS is 2'));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatch(/work stored under 1 partition \(1 action jobs\)/);
    expect(run.output).not.toMatch(/worker running/);
  });

  it('answers its health check while Redis cannot be reached yet, before it can claim the count', async () => {
    const port = await freePort();
    // Nothing listens on REDIS_URL's port: the worker waits for Redis, healthy meanwhile.
    const run = worker({
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      WORKER_HEALTH_PORT: String(port),
    });
    try {
      await run.answers(`http://127.0.0.1:${port}/healthz`);
      // Alive, not ready: it takes no jobs yet.
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
      expect(run.output).not.toMatch(/worker running/);
    } finally {
      await run.stop('SIGKILL');
    }
  });
});
