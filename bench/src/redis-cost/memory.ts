// What a run's keys hold in Redis: each key's `MEMORY USAGE` (every element counted, SAMPLES 0),
// grouped by kind; and a wait, by polling, until the keys due to expire within a window are gone.
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { groupByKind } from './key-kinds.js';
import type { KindFigure } from './key-kinds.js';

/** Every key matching `pattern`, by SCAN. */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return [...new Set(found)];
}

/** `MEMORY USAGE key SAMPLES 0` of each key, in pipelines of 500; a key gone meanwhile is left out. */
export async function keySizes(redis: Redis, keys: readonly string[]): Promise<[string, number][]> {
  const sizes: [string, number][] = [];
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([, bytes], j) => {
      if (typeof bytes === 'number') sizes.push([batch[j]!, bytes]);
    });
  }
  return sizes;
}

/** Keys and bytes per kind of the keys matching `<prefix>:*` (or `pattern`). */
export async function memoryByKind(
  redis: Redis,
  prefix: string,
  queues: readonly string[],
  pattern = `${prefix}:*`,
): Promise<Map<string, KindFigure>> {
  return groupByKind(await keySizes(redis, await scanKeys(redis, pattern)), prefix, queues);
}

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
