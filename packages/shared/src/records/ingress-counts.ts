import { countMinute } from '../outcomes/time-stamps.js';
import { keys } from '../queue/queues.js';
import type { RedisClient } from '../redis.js';

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
