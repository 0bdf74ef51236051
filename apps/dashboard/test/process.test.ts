// The dashboard as a process: it stops, in one line, when Redis holds work stored under another
// partition count than its own, and runs with the stored one.
import { afterEach, expect, test } from 'vitest';
import { partitionCountKey, Partitions } from '@pw/shared/queue';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dashboard(prefix: string, partitions: number): Promise<ChildRun> {
  const run = ChildRun.tsx('apps/dashboard/src/main.ts', {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    QUEUE_PARTITIONS: String(partitions),
    DASHBOARD_PORT: String(await freePort()),
  });
  cleanups.push(() => run.stop('SIGKILL'));
  return run;
}

test('stops, in one line, when dead letters are stored under another partition count', async () => {
  const prefix = uniquePrefix();
  const redis = newTestRedis();
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });
  await redis.set(partitionCountKey(prefix), '4');
  await redis.zadd(`${new Partitions(prefix, 4).prefix(3)}:actions:failed`, 1, 'job');
  const wrong = await dashboard(prefix, 1);
  expect(await wrong.exited).toBe(1);
  const lines = wrong.output.split('\n').filter((line) => line.includes('QUEUE_PARTITIONS is 1'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/Redis holds work stored under 4 partitions \(1 dead letters\)/);

  const right = await dashboard(prefix, 4);
  await right.printed('dashboard listening');
  expect(await right.stop('SIGTERM')).toBe(0);
});
