// The recorder as a process: started before PostgreSQL answers, it waits for it (the backlog
// waits in Redis) instead of failing, and a stop asked for while it waits ends it at once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { partitionCountKey, Partitions } from '@pw/shared/queue';
import { EMBEDDED_POSTGRES_ROLE, recordStreamKey } from '@pw/shared/records';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  startTestPostgres,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function recorder(databaseUrl: string, env: Record<string, string> = {}): Promise<ChildRun> {
  const run = ChildRun.tsx('apps/recorder/src/main.ts', {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: uniquePrefix(),
    ...env,
    DATABASE_URL: databaseUrl,
    RECORDER_HEALTH_PORT: String(await freePort()),
  });
  cleanups.push(() => run.stop('SIGKILL'));
  return run;
}

test('waits for a PostgreSQL that is not up yet, then runs', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pw-recorder-late-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  // The apps' role and a password fixed in advance: the recorder is given its address first.
  const password = 'recorder-waits-for-this';
  const role = EMBEDDED_POSTGRES_ROLE;
  const run = await recorder(`postgres://${role}:${password}@127.0.0.1:${port}/${role}`);
  await run.printed('the record store cannot be opened yet');
  const server = await startTestPostgres({ dataDir, port, persistent: false, password });
  cleanups.push(() => server.stop());
  await run.printed('recorder running');
  expect(await run.stop('SIGTERM')).toBe(0);
});

test('stops at once, exit code 0, when told to while it waits', async () => {
  const run = await recorder(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`);
  await run.printed('the record store cannot be opened yet');
  expect(await run.stop('SIGTERM')).toBe(0);
  expect(run.output).toContain('"msg":"stopped"');
});

test('refuses to start, in one line, while Redis holds changes stored under another partition count', async () => {
  const prefix = uniquePrefix();
  const redis = newTestRedis();
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });
  await redis.set(partitionCountKey(prefix), '4');
  const stream = recordStreamKey(new Partitions(prefix, 4).prefix(2));
  await redis.xadd(stream, '*', 'k', 'audit', 'd', '{}');
  const run = await recorder(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`, {
    QUEUE_PREFIX: prefix,
    QUEUE_PARTITIONS: '2',
  });
  expect(await run.exited).toBe(1);
  const lines = run.output.split('\n').filter((line) => line.includes('QUEUE_PARTITIONS is 2'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(
    /Redis holds work stored under 4 partitions \(1 unrecorded changes\): keep QUEUE_PARTITIONS=4/,
  );
});
