import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { redisPerTest, testRedisUrl } from './test-redis.js';
import { keyKind } from './redis-key-kinds.js';
import { memoryByKind } from './redis-memory.js';

const QUEUES = ['actions'];

describe('the kind of a key', () => {
  it("is the system's name for it, the prefix and the ids taken out", () => {
    const kinds = [
      'p:dedup:2026-11-26T10',
      'p:webhooks:de:9f2c',
      'p:acks:2026-11-26',
      'p:outcome:wh_1',
      'p:records',
      'p:ingress-counts:2026-11-26T08:00:00.000Z',
      'p:latest:contract.signed:c-7',
      'p:circuit:partner-api:held',
    ].map((key) => keyKind(key, 'p', QUEUES));
    expect(kinds).toEqual([
      'dedup with first acks (hash per hour)',
      'legacy webhook dedup keys',
      'legacy kept acks (hash per day)',
      'outcome records',
      'record stream',
      'ingress counts',
      'latest (per entity)',
      'circuits',
    ]);
  });

  it("is BullMQ's part of a queue: job hashes apart from the queue's own sets", () => {
    const kinds = ['p:actions:wh_1.create_quote', 'p:actions:completed', 'p:actions:events'].map(
      (key) => keyKind(key, 'p', QUEUES),
    );
    expect(kinds).toEqual([
      'bullmq job hashes',
      'bullmq queue sets and lists',
      'bullmq events stream',
    ]);
    expect(keyKind('p:other:wh_1.create_quote', 'p', QUEUES)).toBe('other:*');
  });

  it('is the path with its numbered segments starred when the key is not known', () => {
    expect(keyKind('p:new-thing:2026:x', 'p', QUEUES)).toBe('new-thing:*:x');
  });
});

describe('memory by kind', () => {
  const context = redisPerTest();

  it("groups a real Redis's keys, BullMQ's included, with each key's bytes", async () => {
    const { redis, prefix } = context;
    const queue = new Queue('actions', { connection: { url: testRedisUrl() }, prefix });
    try {
      await queue.add('create_quote', { n: 1 }, { jobId: 'wh_1.create_quote' });
      await queue.add('create_quote', { n: 2 }, { jobId: 'wh_2.create_quote' });
    } finally {
      await queue.close();
    }
    await redis.hset(`${prefix}:dedup:2026-11-26T10`, 'field', 'wh_1 mie4abcd create_quote');
    await redis.xadd(`${prefix}:records`, '*', 'change', '{}');
    const kinds = await memoryByKind(redis, prefix, QUEUES);
    expect(kinds.get('bullmq job hashes')?.keys).toBe(2);
    expect(kinds.get('dedup with first acks (hash per hour)')?.keys).toBe(1);
    expect(kinds.get('record stream')?.keys).toBe(1);
    expect(kinds.get('bullmq queue sets and lists')?.keys).toBeGreaterThanOrEqual(1);
    for (const { bytes } of kinds.values()) expect(bytes).toBeGreaterThan(0);
  });
});
