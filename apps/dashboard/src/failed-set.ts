import type { RedisClient } from '@pw/shared';

/**
 * A place in BullMQ's failed set (`<prefix>:actions:failed`), a sorted set of job ids scored by
 * the time each failed (`finishedOn`, epoch ms): the set's own order, newest first, is by score,
 * then by id (descending bytes) among jobs that failed in the same millisecond.
 */
export interface FailedEntry {
  id: string;
  failedAt: number;
}

/** A range of failure times, as `ZRANGE … BYSCORE` bounds: `(` before a bound leaves it out. */
export interface FailedRange {
  max: string;
  min: string;
}

/** True when `a` comes after `b` in the failed set's order (older, or same time and smaller id). */
export const isAfter = (a: FailedEntry, b: FailedEntry): boolean =>
  a.failedAt < b.failedAt ||
  (a.failedAt === b.failedAt && Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)) < 0);

const entries = (reply: string[]): FailedEntry[] => {
  const read: FailedEntry[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) {
    read.push({ id: reply[i]!, failedAt: Number(reply[i + 1]) });
  }
  return read;
};

/**
 * Reads BullMQ's failed set of one queue in its order, newest first, from a position rather than
 * an index: entries that arrive (newer) or leave (replayed, removed by age) meanwhile move no
 * position, so paging by position neither repeats nor skips a dead letter.
 */
export class FailedSet {
  /** `key`: the failed set (`queue.toKey('failed')`); `redis`: the connection the queue was made with. */
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {}

  /**
   * Up to `count` entries in `range` after `after` (from the start of the range without it); the
   * jobs that failed in `after`'s millisecond come on top, so a read can hold a few more. `more`:
   * the range may hold further entries.
   */
  async read(
    range: FailedRange,
    after: FailedEntry | undefined,
    count: number,
  ): Promise<{ entries: FailedEntry[]; more: boolean }> {
    const { redis: client, key } = this;
    if (!after) {
      const page = entries(await zrange(client, key, range.max, range.min, count));
      return { entries: page, more: page.length === count };
    }
    const at = String(after.failedAt);
    const [ties, older] = await Promise.all([
      zrange(client, key, at, at),
      zrange(client, key, `(${at}`, range.min, count),
    ]);
    const rest = entries(older);
    return {
      entries: [...entries(ties).filter((entry) => isAfter(entry, after)), ...rest],
      more: rest.length === count,
    };
  }

  /** How many entries `range` holds. */
  async count(range: FailedRange): Promise<number> {
    return this.redis.zcount(this.key, range.min, range.max);
  }
}

/** `ZRANGE key max min BYSCORE REV [LIMIT 0 count] WITHSCORES`. */
const zrange = (client: RedisClient, key: string, max: string, min: string, count?: number) =>
  count === undefined
    ? client.zrange(key, max, min, 'BYSCORE', 'REV', 'WITHSCORES')
    : client.zrange(key, max, min, 'BYSCORE', 'REV', 'LIMIT', 0, count, 'WITHSCORES');
