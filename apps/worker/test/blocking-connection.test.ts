// A worker whose blocking connection is cut (a failover, a proxy's idle timeout, CLIENT KILL)
// takes jobs again within seconds: BullMQ's blocking client reconnects and waits again, and no
// job waits for the next one to wake it (docs/operations.md#failover).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { PrivateRedis } from '@pw/test-utils';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

let redis: PrivateRedis;
let harness: WorkerHarness;
let admin: Redis;
beforeAll(async () => {
  redis = await PrivateRedis.start();
  harness = await startWorkerHarness({ redisUrl: redis.url });
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
}, 60_000);
afterAll(async () => {
  admin?.disconnect();
  await harness?.close();
  await redis?.destroy();
});

/** The ids of the connections waiting in a blocking command (BullMQ's wait for the next job). */
async function blockingClients(): Promise<string[]> {
  const list = (await admin.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => /\bcmd=(bzpopmin|blmove|brpoplpush|bzpopmax)\b/.test(line))
    .map((line) => /\bid=(\d+)/.exec(line)![1]!);
}

it('takes the next job within seconds after its blocking connection is killed', async () => {
  const first = webhookJob('quote', 'approved');
  await harness.enqueue(first);
  await harness.finished(first.webhook_id, 20_000);
  // Waiting for the next job now, on a blocking connection.
  await expect.poll(blockingClients, { timeout: 10_000 }).not.toEqual([]);
  for (const id of await blockingClients()) await admin.client('KILL', 'ID', id);

  const next = webhookJob('contract', 'active');
  await harness.enqueue(next);
  const outcome = await harness.finished(next.webhook_id, 10_000);
  expect(outcome.state).toBe('completed');
  // And it waits again, blocking, as before.
  await expect.poll(blockingClients, { timeout: 10_000 }).not.toEqual([]);
});
