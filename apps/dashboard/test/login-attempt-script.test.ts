import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withCommand } from '@pw/shared/lua';
import { deleteKeys, newTestRedis, uniquePrefix } from '@pw/test-utils';
import { LOGIN_ATTEMPT } from '../src/login-limit.js';

// lua/login-attempt-1.lua on its own, against a real Redis: its replies and the window's time.

interface LoginCommand {
  pwLoginAttempt(key: string, failed: 0 | 1, max: number, windowMs: number): Promise<number[]>;
}

let redis: ReturnType<typeof newTestRedis>;
let key: string;
let prefix: string;
beforeEach(() => {
  redis = newTestRedis();
  prefix = uniquePrefix();
  key = `${prefix}:login-failures:10.0.0.1`;
});
afterEach(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const attempt = (failed: 0 | 1) =>
  withCommand<LoginCommand>(redis, LOGIN_ATTEMPT).pwLoginAttempt(key, failed, 2, 60_000);

describe('the login attempt script', () => {
  it('counts failures from the first, which starts the window; a login that did not fail is not counted', async () => {
    expect(await attempt(0)).toEqual([1, 0]);
    expect(await redis.exists(key)).toBe(0);
    expect(await attempt(1)).toEqual([1, 1]);
    const window = await redis.pttl(key);
    expect(window).toBeGreaterThan(55_000);
    expect(await attempt(1)).toEqual([1, 2]);
    // The second failure does not move the window's end.
    expect(await redis.pttl(key)).toBeLessThanOrEqual(window);
  });

  it('refuses an address at the limit, whatever it sent, with the ms left in its window', async () => {
    await redis.set(key, '2', 'PX', 30_000);
    for (const failed of [0, 1] as const) {
      const [allowed, left] = await attempt(failed);
      expect(allowed).toBe(0);
      expect(left).toBeGreaterThan(25_000);
      expect(left).toBeLessThanOrEqual(30_000);
    }
    expect(await redis.get(key)).toBe('2');
  });
});
