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

  it('reads the sets of several partitions as one, in one order, each entry once across reads', async () => {
    // Two more partitions' sets, failing in the same milliseconds as the first.
    const others = [`${prefix}:p1:actions:failed`, `${prefix}:p2:actions:failed`];
    for (const [n, other] of others.entries()) {
      for (let i = 0; i < 9; i += 1) await redis.zadd(other, 1000 + (i % 3), `p${n + 1}-job-${i}`);
    }
    const merged = new FailedSet(redis, [key, ...others]);
    const all = await readAll(merged, { max: '+inf', min: '-inf' }, 5);
    const expected = (
      await Promise.all(
        [key, ...others].map(async (set) =>
          (await redis.zrange(set, '+inf', '-inf', 'BYSCORE', 'REV', 'WITHSCORES')).flatMap(
            (value, i, list) => (i % 2 === 0 ? [{ id: value, failedAt: Number(list[i + 1]) }] : []),
          ),
        ),
      )
    )
      .flat()
      .sort(
        (a, b) => b.failedAt - a.failedAt || Buffer.compare(Buffer.from(b.id), Buffer.from(a.id)),
      );
    expect(all).toEqual(expected);
    expect(all).toHaveLength(48);
    expect(await merged.count({ max: '1001', min: '1001' })).toBe(16);
  });
});
