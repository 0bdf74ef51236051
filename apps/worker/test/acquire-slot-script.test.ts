import { describe, expect, it } from 'vitest';
import { withCommand } from '@pw/shared/lua';
import { redisPerTest } from '@pw/test-utils';
import { ACQUIRE_SLOT } from '../src/action-limits.js';

// lua/acquire-slot-2.lua on its own, against a real Redis: its replies and the keys' times.

interface SlotCommand {
  pwAcquireSlot(...args: (string | number)[]): Promise<number>;
}

const t = redisPerTest();

/** One try of `job` under a rate of `rate` per `windowMs` and `concurrent` calls in flight. */
const acquire = (job: string, rate: number, windowMs: number, concurrent: number) =>
  withCommand<SlotCommand>(t.redis, ACQUIRE_SLOT).pwAcquireSlot(
    ...[`${t.prefix}:started`, `${t.prefix}:in-flight`],
    ...[job, rate, windowMs, concurrent, 30_000],
  );

/** Redis's clock, in ms: the script's. */
async function redisMs() {
  const [seconds, micros] = await t.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('the acquire slot script', () => {
  it('takes in-flight slots up to the most allowed, then answers -1; a job holding one takes it again', async () => {
    expect(await acquire('a', 0, 0, 2)).toBe(0);
    expect(await acquire('b', 0, 0, 2)).toBe(0);
    expect(await acquire('c', 0, 0, 2)).toBe(-1);
    // A later millisecond of Redis's clock: the renewed lease then ends after b's.
    const taken = await redisMs();
    while ((await redisMs()) === taken);
    expect(await acquire('a', 0, 0, 2)).toBe(0);
    // Taken again, its lease is renewed: it now ends last.
    expect(await t.redis.zrange(`${t.prefix}:in-flight`, '0', '-1')).toEqual(['b', 'a']);
    expect(await t.redis.pttl(`${t.prefix}:in-flight`)).toBeGreaterThan(25_000);
    expect(await t.redis.exists(`${t.prefix}:started`)).toBe(0);
  });

  it('grants calls up to the rate in a window, then answers the ms until the oldest leaves it', async () => {
    expect(await acquire('a', 2, 5_000, 0)).toBe(0);
    expect(await acquire('b', 2, 5_000, 0)).toBe(0);
    const wait = await acquire('c', 2, 5_000, 0);
    expect(wait).toBeGreaterThan(4_000);
    expect(wait).toBeLessThanOrEqual(5_000);
    expect(await t.redis.zcard(`${t.prefix}:started`)).toBe(2);
    expect(await t.redis.pttl(`${t.prefix}:started`)).toBeGreaterThan(4_000);
    expect(await t.redis.exists(`${t.prefix}:in-flight`)).toBe(0);
  });
});
