// What a run's keys hold in Redis (the bench's, the soak's): each key's `MEMORY USAGE` (every
// element counted, SAMPLES 0), grouped by kind (redis-key-kinds.ts).
import type { Redis } from 'ioredis';
import { groupByKind } from './redis-key-kinds.js';
import type { KindFigure } from './redis-key-kinds.js';

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

/**
 * Keys and bytes per kind of the keys matching `<prefix>:*` (or `pattern`), but for those `keep`
 * turns down.
 */
export async function memoryByKind(
  redis: Redis,
  prefix: string,
  queues: readonly string[],
  { pattern = `${prefix}:*`, keep = () => true }: MemoryScan = {},
): Promise<Map<string, KindFigure>> {
  const keys = (await scanKeys(redis, pattern)).filter(keep);
  return groupByKind(await keySizes(redis, keys), prefix, queues);
}

export interface MemoryScan {
  /** The keys to read. @defaultValue `<prefix>:*` */
  pattern?: string;
  /** Which of them count. @defaultValue all */
  keep?: (key: string) => boolean;
}
