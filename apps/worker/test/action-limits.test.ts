// The per-action limits on Redis's own clock, the one every worker shares: what the end-to-end
// test in worker.test.ts can only see through each call's trip to the partner API.
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionSettingsSchema } from '@pw/shared/actions';
import { keys } from '@pw/shared/queue';
import { deleteKeys, testRedisUrl, uniquePrefix } from '@pw/test-utils';
import { ActionLimits } from '../src/action-limits.js';

const prefix = uniquePrefix();
let redis: Redis;
let limits: ActionLimits;
beforeAll(() => {
  redis = new Redis(testRedisUrl());
  limits = new ActionLimits(redis, prefix, 30_000);
});
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

/** The Redis times at which the slots still in the window were granted. */
async function grantTimes(action: string): Promise<number[]> {
  const entries = await redis.zrange(keys.rateWindow(prefix, action), '0', '-1', 'WITHSCORES');
  return entries.filter((_, index) => index % 2 === 1).map(Number);
}

describe('ActionLimits', () => {
  it('rate_limit: grants `max` slots per `duration_ms`, the next one a full window after the first', async () => {
    const settings = actionSettingsSchema.parse({ rate_limit: { max: 3, duration_ms: 600 } });
    for (const job of ['a', 'b', 'c'])
      expect(await limits.acquire('update_crm', job, settings, 0)).toBe(0);
    const [first] = await grantTimes('update_crm');
    const wait = await limits.acquire('update_crm', 'd', settings, 0);
    // The wait is the rest of the window plus a spread of at most duration / max.
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(600 + 200);
    expect(await grantTimes('update_crm')).toHaveLength(3);
    let granted = wait;
    for (let tries = 0; granted > 0; tries++) {
      expect(tries).toBeLessThan(10);
      await delay(granted);
      granted = await limits.acquire('update_crm', 'd', settings, 0);
    }
    const latest = Math.max(...(await grantTimes('update_crm')));
    expect(latest - first!).toBeGreaterThanOrEqual(600);
  });

  it('max_concurrent: a slot is free again once its call gives it back', async () => {
    const settings = actionSettingsSchema.parse({ max_concurrent: 2 });
    expect(await limits.acquire('lock_price', 'a', settings, 0)).toBe(0);
    expect(await limits.acquire('lock_price', 'b', settings, 0)).toBe(0);
    expect(await limits.acquire('lock_price', 'c', settings, 0)).toBeGreaterThan(0);
    // A job that already holds a slot (a retry of the same call) keeps it.
    expect(await limits.acquire('lock_price', 'a', settings, 0)).toBe(0);
    await limits.release('lock_price', 'a');
    expect(await limits.acquire('lock_price', 'c', settings, 0)).toBe(0);
  });
});
