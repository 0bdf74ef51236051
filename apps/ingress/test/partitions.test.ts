// The ingress over queue partitions (docs/operations.md → Partitions): each webhook lands in its
// entity's partition, whole, and a process refuses a partition count that does not match the work
// Redis holds.
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { actionJobId, keys, partitionCountKey, Partitions } from '@pw/shared/queue';
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
    // Nothing per webhook was written outside the partitions.
    expect(await keysOf(harness, `${harness.prefix}:*`)).toEqual([]);
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

describe('the stored partition count', () => {
  const prefix = uniquePrefix();
  afterEach(async () => {
    const redis = newTestRedis();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  const ingress = async (count: number) =>
    ChildRun.tsx('apps/ingress/src/main.ts', {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      QUEUE_PARTITIONS: String(count),
      INGRESS_PORT: String(await freePort()),
      WEBHOOK_SECRETS: TEST_SECRET,
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
