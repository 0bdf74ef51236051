// A wait, by polling, until the keys due to expire within a window are gone (what the keys hold:
// test-utils' `memoryByKind`).
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { scanKeys } from '@pw/test-utils';

/** The keys under `prefix` whose time to live is at most `withinMs`. */
export async function keysExpiringWithin(
  redis: Redis,
  prefix: string,
  withinMs: number,
): Promise<string[]> {
  const keys = await scanKeys(redis, `${prefix}:*`);
  const expiring: string[] = [];
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.pttl(key);
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([, ttl], j) => {
      if (typeof ttl === 'number' && ttl > 0 && ttl <= withinMs) expiring.push(batch[j]!);
    });
  }
  return expiring;
}

/**
 * Resolves once none of `keys` exists, asking every 250 ms (EXISTS expires a key that is due, so
 * the answer does not wait on Redis's background expiry); gives up after `timeoutMs`.
 */
export async function untilGone(redis: Redis, keys: readonly string[], timeoutMs: number) {
  const giveUpAt = Date.now() + timeoutMs;
  let left = [...keys];
  while (left.length > 0) {
    if (Date.now() > giveUpAt) throw new Error(`${left.length} keys did not expire in time`);
    const still: string[] = [];
    for (let i = 0; i < left.length; i += 500) {
      const batch = left.slice(i, i + 500);
      const pipeline = redis.pipeline();
      for (const key of batch) pipeline.exists(key);
      const replies = (await pipeline.exec()) ?? [];
      replies.forEach(([, exists], j) => exists === 1 && still.push(batch[j]!));
    }
    left = still;
    if (left.length > 0) await delay(250);
  }
}
