// The ingress over queue partitions (docs/operations.md → Partitions): each webhook lands in its
// entity's partition, whole, and a process refuses a partition count that does not match the work
// Redis holds.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { actionJobId, keys, partitionCountKey, Partitions } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  signedEvent,
  testRedisUrl,
  TEST_SECRET,
  uniquePrefix,
} from '@pw/test-utils';
import { postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const keysOf = async (h: Harness, pattern: string) => {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await h.inspect.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
};

describe('the ingress over four partitions', () => {
  it("puts each webhook, its jobs, record and keys in its entity's partition, and nowhere else", async () => {
    harness = await startHarness({ partitions: 4 });
    const { partitions, queues } = harness;
    const acks = [];
    for (let i = 0; i < 24; i++) {
      const event = signedEvent('quote', { id: `p${i}` });
      const response = await postJson(harness.app, '/webhooks/quote-status', event);
      expect(response.status).toBe(200);
      const ack = acknowledgementSchema.parse(response.body);
      const partition = partitions.ofEntity(`Q-p${i}`);
      expect(partitions.ofWebhookId(ack.webhook_id)).toBe(partition);
      for (const [index, queue] of queues.entries()) {
        const job = await queue.getJob(actionJobId(ack.webhook_id, ack.actions_triggered[0]!));
        expect(job !== undefined).toBe(index === partition);
      }
      expect(
        await harness.inspect.exists(keys.outcome(partitions.prefix(partition), ack.webhook_id)),
      ).toBe(1);
      acks.push(partition);
    }
    // Every partition got some of them.
    expect(new Set(acks).size).toBe(4);
    // Nothing per webhook was written outside the partitions: beside them, only the stored count
    // and the map's secret, written once.
    expect((await keysOf(harness, `${harness.prefix}:*`)).sort()).toEqual([
      partitionCountKey(harness.prefix),
      keys.partitionMapKey(harness.prefix),
    ]);
  });

  it('spreads entity ids a sender chose to collide: the map is keyed by a secret it cannot know', async () => {
    harness = await startHarness({ partitions: 8 });
    // Ids that all fall in partition 0 of the map a sender can compute: sha256 of the id, mod 8.
    const aimed: string[] = [];
    for (let i = 0; aimed.length < 80; i++) {
      const digest = createHash('sha256').update(`Q-aim${i}`).digest();
      if (digest.readUInt32BE(0) % 8 === 0) aimed.push(`aim${i}`);
    }
    const byPartition = new Array<number>(8).fill(0);
    for (const id of aimed) {
      const response = await postJson(
        harness.app,
        '/webhooks/quote-status',
        signedEvent('quote', { id }),
      );
      const ack = acknowledgementSchema.parse(response.body);
      byPartition[harness.partitions.ofWebhookId(ack.webhook_id)]! += 1;
    }
    // 80 over 8 partitions: 10 each on average; at random, none holds 30.
    expect(byPartition.filter((count) => count > 0).length).toBeGreaterThanOrEqual(6);
    expect(Math.max(...byPartition)).toBeLessThan(30);
  });

  it("answers a redelivery from its partition, and keeps an entity's order guard there", async () => {
    harness = await startHarness({ partitions: 4 });
    const newer = signedEvent('quote', { id: 'order', now: new Date(Date.now() - 1000) });
    const older = signedEvent('quote', {
      id: 'order',
      status: 'accepted',
      now: new Date(Date.now() - 60_000),
    });
    const first = await postJson(harness.app, '/webhooks/quote-status', newer);
    const again = await postJson(harness.app, '/webhooks/quote-status', newer);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const late = acknowledgementSchema.parse(
      (await postJson(harness.app, '/webhooks/quote-status', older)).body,
    );
    const prefix = harness.partitions.prefix(harness.partitions.ofEntity('Q-order'));
    expect(await harness.inspect.hget(keys.outcome(prefix, late.webhook_id), 'stale')).toBe('1');
  });
});

const countPrefix = uniquePrefix();

const ingress = async (count: number, port?: number) =>
  ChildRun.tsx('apps/ingress/src/main.ts', {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: countPrefix,
    QUEUE_PARTITIONS: String(count),
    INGRESS_PORT: String(port ?? (await freePort())),
    WEBHOOK_SECRETS: TEST_SECRET,
  });

/** `npm run partitions -- …args`, to its end: its exit code and output. */
const partitionsCommand = async (...args: string[]) => {
  const run = ChildRun.start(['npm', 'run', '-s', 'partitions', '--', ...args], {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: countPrefix,
  });
  return { code: await run.exited, output: run.output };
};

const post = (port: number) =>
  fetch(`http://127.0.0.1:${port}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signedEvent('quote')),
  });

afterEach(async () => {
  const redis = newTestRedis();
  await deleteKeys(redis, countPrefix);
  redis.disconnect();
});

describe('a process with another partition count', () => {
  const prefix = countPrefix;
  it('is never taken over by a process started with another count, however idle', async () => {
    const port = await freePort();
    const running = await ingress(4, port);
    await running.printed('ingress listening');
    const other = await ingress(12);
    expect(await other.exited).toBe(1);
    expect(other.output).toContain(
      'QUEUE_PARTITIONS is 12 but the partition count stored in Redis is 4: keep QUEUE_PARTITIONS=4, or change the count with `npm run partitions -- 12`',
    );
    const redis = newTestRedis();
    // What the running ingress reads every 5 s: unchanged, so it runs on.
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
    expect((await post(port)).status).toBe(200);
    redis.disconnect();
    expect(await running.stop('SIGTERM')).toBe(0);
  });

  it('stops an ingress whose count differs from the one work is stored under, in one line', async () => {
    const redis = newTestRedis();
    await redis.set(partitionCountKey(prefix), '4');
    await redis.rpush(`${new Partitions(prefix, 4).prefix(1)}:actions:wait`, 'job');
    const wrong = await ingress(12);
    expect(await wrong.exited).toBe(1);
    expect(wrong.output).toMatch(
      /QUEUE_PARTITIONS is 12 but Redis holds work stored under 4 partitions \(1 action jobs\)/,
    );
    const right = await ingress(4);
    await right.printed('ingress listening');
    expect(await right.stop('SIGTERM')).toBe(0);
    redis.disconnect();
  });
});

// Six processes one after the other (two ingresses, four runs of the command through npm and tsx):
// on a loaded 2-core machine that outlasts the default 20 s.
describe('the partitions command', { timeout: 90_000 }, () => {
  const prefix = countPrefix;
  it('changes the count once drained, which stops the processes on the old count', async () => {
    const port = await freePort();
    const running = await ingress(4, port);
    await running.printed('ingress listening');
    expect((await post(port)).status).toBe(200);
    const before = await partitionsCommand();
    expect(before.code).toBe(0);
    expect(before.output).toContain(
      'the partition count stored in Redis is 4 (QUEUE_PARTITIONS here: 1); waiting under it: 2 action jobs, 1 unrecorded changes',
    );
    expect(await partitionsCommand('0')).toEqual({
      code: 2,
      output: expect.stringContaining(
        'usage: npm run partitions -- [COUNT] (COUNT: 1 to 1024)',
      ) as string,
    });
    const refused = await partitionsCommand('12');
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      'the partition count stays 4, not 12: Redis holds work stored under it (2 action jobs, 1 unrecorded changes); drain it first',
    );
    // Drained: what the workers and the recorder would have taken.
    const redis = newTestRedis();
    for (const partition of new Partitions(prefix, 4).prefixes) await deleteKeys(redis, partition);
    const changed = await partitionsCommand('12');
    expect(changed).toEqual({
      code: 0,
      output: expect.stringContaining(
        'the partition count stored in Redis is now 12 (was 4): processes still running with 4 stop within 5 s',
      ) as string,
    });
    expect(await running.exited).toBe(1);
    expect(running.output).toContain(
      'QUEUE_PARTITIONS is 4 but the partition count stored in Redis changed to 12 while this process ran',
    );
    const audit = await redis.xrange(
      recordStreamKey(new Partitions(prefix, 12).prefix(0)),
      '-',
      '+',
    );
    expect(audit.map(([, fields]) => JSON.parse(fields[3]!) as unknown)).toEqual([
      expect.objectContaining({
        action: 'partition_count',
        target: 'QUEUE_PARTITIONS',
        details: { from: 4, to: 12 },
      }),
    ]);
    redis.disconnect();
    const next = await ingress(12);
    await next.printed('ingress listening');
    expect(await next.stop('SIGTERM')).toBe(0);
  });
});
