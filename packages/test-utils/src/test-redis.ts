import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/** The Redis the global setup chose for this run. */
export const testRedisUrl = (): string => inject('redisUrl');

/** A queue prefix of the test's own, so tests never see each other's keys. */
export const uniquePrefix = (): string => `pwtest-${randomBytes(6).toString('hex')}`;

/**
 * Deletes every key under `prefix` (the test's own queues and records), its partitions' included
 * (`{<prefix>:3}:...`, `Partitions`).
 */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const base = prefix.replaceAll(/[{}]/g, '');
  for (const pattern of [`${prefix}:*`, `{${base}:*`]) {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (found.length > 0) await redis.del(...found);
    } while (cursor !== '0');
  }
}

/** Keys under `prefix` matching `pattern` (a glob after the prefix). */
export async function keysUnder(redis: Redis, prefix: string, pattern = '*'): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:${pattern}`, 'COUNT', 500);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

export const newTestRedis = (): Redis => new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });

/**
 * A connection and a key prefix of each test's own: opened before each test, the prefix's keys
 * deleted and the connection closed after it. Call it at a file's or a describe's top level and
 * read `redis` and `prefix` inside the tests.
 */
export function redisPerTest(): { readonly redis: Redis; readonly prefix: string } {
  let redis: Redis | undefined;
  let prefix = '';
  beforeEach(() => {
    redis = newTestRedis();
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    if (!redis) return;
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });
  return {
    get redis() {
      if (!redis) throw new Error('redisPerTest: read inside a test');
      return redis;
    },
    get prefix() {
      return prefix;
    },
  };
}
