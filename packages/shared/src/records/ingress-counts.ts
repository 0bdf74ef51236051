import { countMinute } from '../outcomes/time-stamps.js';
import type { Partitions } from '../queue/partitions.js';
import { keys } from '../queue/queues.js';
import type { RedisClient } from '../redis.js';
import { globEscape, scanKeys } from './scan-keys.js';

/** Seconds a minute's counts stay in Redis: long enough for a recorder that was away. */
export const INGRESS_COUNTS_KEEP_SECONDS = 172_800;

/**
 * The ingress's per-minute counts of duplicates and refusals (by code), for the ledger
 * (docs/records.md). Accepted webhooks are counted in the add's own script; these are counted in
 * memory and sent once a second in one pipeline, so a flood of refused requests costs Redis
 * nothing per request. Best effort: counts that cannot be sent while Redis is away are dropped,
 * with the requests they counted (which were refused or answered as repeats, and changed
 * nothing).
 */
export class IngressCounts {
  private pending = new Map<string, Map<string, number>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    flushMs = 1000,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), flushMs).unref();
  }

  count(code: string, at = new Date()): void {
    const minute = countMinute(at);
    const codes = this.pending.get(minute) ?? new Map<string, number>();
    codes.set(code, (codes.get(code) ?? 0) + 1);
    this.pending.set(minute, codes);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const sending = this.pending;
    this.pending = new Map();
    const pipeline = this.redis.pipeline();
    for (const [minute, codes] of sending) {
      const key = keys.ingressCounts(this.prefix, minute);
      for (const [code, n] of codes) pipeline.hincrby(key, code, n);
      pipeline.expire(key, INGRESS_COUNTS_KEEP_SECONDS);
      pipeline.sadd(keys.ingressCountsChanged(this.prefix), minute);
    }
    await pipeline.exec();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch(() => undefined);
  }
}

/** One minute's total of one code, over every partition, as the record store keeps it. */
export interface IngressCountRow {
  minute: string;
  code: string;
  count: number;
}

/** Minutes, by the partitions whose changed sets named them. */
export type ChangedMinutes = Map<number, string[]>;

/**
 * Takes the minutes whose counts changed off every partition's changed set (each partition counts
 * on its own: `keys.ingressCountsChanged(partitions.prefix(i))`). A count that comes in after marks
 * its minute again; `markChanged` puts them back when they could not be copied.
 */
export async function takeChangedMinutes(
  redis: RedisClient,
  partitions: Partitions,
): Promise<ChangedMinutes> {
  const taken: ChangedMinutes = new Map();
  await Promise.all(
    partitions.all().map(async (index) => {
      const key = keys.ingressCountsChanged(partitions.prefix(index));
      const minutes = await redis.smembers(key);
      if (minutes.length === 0) return;
      await redis.srem(key, ...minutes);
      taken.set(index, minutes);
    }),
  );
  return taken;
}

/** Marks minutes changed again, each in the changed set of the partition it is named for. */
export async function markChanged(
  redis: RedisClient,
  partitions: Partitions,
  minutes: ChangedMinutes,
): Promise<void> {
  await Promise.all(
    [...minutes]
      .filter(([, list]) => list.length > 0)
      .map(([index, list]) =>
        redis.sadd(keys.ingressCountsChanged(partitions.prefix(index)), ...list),
      ),
  );
}

/**
 * The running totals of `minutes`, each code summed over every partition: the store keeps one
 * total per minute and code (the last written wins), so a minute one partition changed is read
 * from all of them.
 */
export async function ingressTotals(
  redis: RedisClient,
  partitions: Partitions,
  minutes: Iterable<string>,
): Promise<IngressCountRow[]> {
  const rows: IngressCountRow[] = [];
  for (const minute of new Set(minutes)) {
    const counts = await Promise.all(
      partitions.prefixes.map((prefix) => redis.hgetall(keys.ingressCounts(prefix, minute))),
    );
    const totals = new Map<string, number>();
    for (const byCode of counts) {
      for (const [code, count] of Object.entries(byCode)) {
        totals.set(code, (totals.get(code) ?? 0) + Number(count));
      }
    }
    for (const [code, count] of totals) rows.push({ minute, code, count });
  }
  return rows;
}

/**
 * Every minute whose counts are still in Redis, by partition (a SCAN of every master, at start):
 * a recorder that died between taking minutes off a changed set and writing them loses none.
 */
export async function keptMinutes(
  redis: RedisClient,
  partitions: Partitions,
): Promise<ChangedMinutes> {
  // What lies between a partition's prefix and a minute in `keys.ingressCounts`.
  const infix = keys.ingressCounts('', '');
  const byPrefix = new Map(partitions.prefixes.map((prefix, index) => [prefix, index]));
  // One pattern for every partition: a SCAN walks the whole keyspace, whatever it matches.
  const base = partitions.shared.replaceAll(/[{}]/g, '');
  const pattern =
    partitions.count === 1
      ? `${globEscape(partitions.shared)}${infix}*`
      : `{${globEscape(base)}:*}${infix}*`;
  const found: ChangedMinutes = new Map();
  for await (const batch of scanKeys(redis, pattern)) {
    for (const key of batch) {
      const at = key.indexOf(infix);
      const index = byPrefix.get(key.slice(0, at));
      const minute = key.slice(at + infix.length);
      if (index === undefined || key === keys.ingressCountsChanged(key.slice(0, at))) continue;
      found.set(index, [...(found.get(index) ?? []), minute]);
    }
  }
  return found;
}
