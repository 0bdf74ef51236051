import { Cluster } from 'ioredis';
import type { Redis } from 'ioredis';
import type { RedisClient } from '../redis.js';

/** `text` with Redis's glob characters escaped, to stand for itself in a `MATCH` pattern. */
export const globEscape = (text: string): string => text.replaceAll(/[*?[\]\\]/g, '\\$&');

/**
 * Every key matching `pattern`, a batch at a time (a key may come twice, as with SCAN). On a Redis
 * Cluster, SCAN reads the one node it is sent to, so every master is scanned.
 */
export async function* scanKeys(redis: RedisClient, pattern: string): AsyncGenerator<string[]> {
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (found.length > 0) yield found;
    } while (cursor !== '0');
  }
}
