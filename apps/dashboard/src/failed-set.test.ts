import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys, testRedisUrl, uniquePrefix } from '@pw/test-utils';
import { FailedSet } from './failed-set.js';
import type { FailedEntry } from './failed-set.js';

const prefix = uniquePrefix();
const key = `${prefix}:actions:failed`;
let redis: Redis;
beforeAll(async () => {
  redis = new Redis(testRedisUrl());
  // 30 jobs failed in three milliseconds, ten in each, as BullMQ scores them.
  for (let i = 0; i < 30; i += 1) await redis.zadd(key, 1000 + Math.floor(i / 10), `job-${i}`);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

/** Every entry of `range`, read `count` at a time from each read's last entry. */
async function readAll(set: FailedSet, range = { max: '+inf', min: '-inf' }, count = 4) {
  const all: FailedEntry[] = [];
  let after: FailedEntry | undefined;
  for (let more = true; more;) {
    const read = await set.read(range, after, count);
    all.push(...read.entries);
    more = read.more;
    after = read.entries.at(-1) ?? after;
  }
  return all;
}

describe('FailedSet', () => {
  it('reads the set newest first, ids descending within a millisecond, each entry once across reads that end inside a millisecond', async () => {
    const all = await readAll(new FailedSet(redis, key));
    const expected = await redis.zrange(key, '+inf', '-inf', 'BYSCORE', 'REV');
    expect(all.map((entry) => entry.id)).toEqual(expected);
    expect(new Set(expected).size).toBe(30);
    expect(all[0]).toEqual({ id: 'job-29', failedAt: 1002 });
  });

  it('keeps to a range of failure times, `(` leaving a bound out, and counts it', async () => {
    const set = new FailedSet(redis, key);
    const range = { max: '(1002', min: '1001' };
    const within = await readAll(set, range, 3);
    expect(within.map((entry) => entry.failedAt)).toEqual(Array<number>(10).fill(1001));
    expect(await set.count(range)).toBe(10);
  });
});
