import type { RedisClient } from '@pw/shared/runtime';

/**
 * A place in BullMQ's failed set (`<prefix>:actions:failed`, one per partition), a sorted set of job ids scored by
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
 * Reads BullMQ's failed sets (one queue's, or the `actions` queue's of every partition, merged)
 * in their order, newest first, from a position rather than an index: entries that arrive (newer)
 * or leave (replayed, removed by age) meanwhile move no position, so paging by position neither
 * repeats nor skips a dead letter. Job ids are unique across partitions (each names its webhook),
 * so one position orders the entries of every set.
 */
export class FailedSet {
  private readonly keys: readonly string[];

  /**
   * `keys`: the failed set (`queue.toKey('failed')`), or one per partition; `redis`: the
   * connection the queues were made with.
   */
  constructor(
    private readonly redis: RedisClient,
    keys: string | readonly string[],
  ) {
    this.keys = typeof keys === 'string' ? [keys] : keys;
  }

  /**
   * Up to `count` entries in `range` after `after` (from the start of the range without it); of
   * one set, the jobs that failed in `after`'s millisecond come on top, so a read can hold a few
   * more. `more`: the range may hold further entries.
   */
  async read(
    range: FailedRange,
    after: FailedEntry | undefined,
    count: number,
  ): Promise<{ entries: FailedEntry[]; more: boolean }> {
    const reads = await Promise.all(this.keys.map((key) => this.readOne(key, range, after, count)));
    const [only] = reads;
    if (reads.length === 1 && only) return only;
    // Each set's first `count` hold the first `count` of them all; the rest is read again later.
    const merged = reads.flatMap((read) => read.entries).sort((a, b) => (isAfter(a, b) ? 1 : -1));
    return {
      entries: merged.slice(0, count),
      more: merged.length > count || reads.some((read) => read.more),
    };
  }

  private async readOne(
    key: string,
    range: FailedRange,
    after: FailedEntry | undefined,
    count: number,
  ): Promise<{ entries: FailedEntry[]; more: boolean }> {
    const { redis: client } = this;
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
    const counts = await Promise.all(
      this.keys.map((key) => this.redis.zcount(key, range.min, range.max)),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }
}

/** `ZRANGE key max min BYSCORE REV [LIMIT 0 count] WITHSCORES`. */
const zrange = (client: RedisClient, key: string, max: string, min: string, count?: number) =>
  count === undefined
    ? client.zrange(key, max, min, 'BYSCORE', 'REV', 'WITHSCORES')
    : client.zrange(key, max, min, 'BYSCORE', 'REV', 'LIMIT', 0, count, 'WITHSCORES');
