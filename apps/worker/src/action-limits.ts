import { keys, withCommand } from '@pw/shared';
import type { ActionSettings, LuaCommand, RedisClient } from '@pw/shared';

/**
 * Takes a slot for one call, or says how long to wait. KEYS[1] start times (sorted set),
 * KEYS[2] leases of calls in flight (sorted set, member = job id, score = expiry).
 * ARGV: job id, rate max (0: none), rate window ms, concurrent max (0: none), lease ms.
 * Returns 0 when the slot is taken, else the ms until one may be free. Redis's clock is the one
 * clock every worker shares.
 */
const ACQUIRE_SLOT: LuaCommand = {
  name: 'pwAcquireSlot',
  numberOfKeys: 2,
  lua: `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local member, rateMax, window = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local concurrentMax, lease = tonumber(ARGV[4]), tonumber(ARGV[5])
if concurrentMax > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if not redis.call('ZSCORE', KEYS[2], member) and redis.call('ZCARD', KEYS[2]) >= concurrentMax then
    return -1
  end
end
if rateMax > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  if redis.call('ZCARD', KEYS[1]) >= rateMax then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return math.max(1, tonumber(oldest[2]) + window - now)
  end
  redis.call('ZADD', KEYS[1], now, member .. ':' .. now)
  redis.call('PEXPIRE', KEYS[1], window)
end
if concurrentMax > 0 then
  redis.call('ZADD', KEYS[2], now + lease, member)
  redis.call('PEXPIRE', KEYS[2], lease)
end
return 0
`,
};

interface LimitCommands {
  pwAcquireSlot(
    started: string,
    inFlight: string,
    member: string,
    rateMax: number,
    windowMs: number,
    concurrentMax: number,
    leaseMs: number,
  ): Promise<number>;
}

/** How long a job waits when every in-flight slot is taken: grows with each wait, up to 2 s. */
export function concurrencyWait(waitsSoFar: number, random = Math.random): number {
  const base = Math.min(2000, 50 * 2 ** Math.min(waitsSoFar, 6));
  return Math.round(base * (0.5 + random()));
}

/**
 * The per-action limits of `ACTIONS_CONFIG` (`rate_limit`, `max_concurrent`), shared by every
 * worker process through Redis, so a burst of webhooks cannot flood one partner endpoint.
 */
export class ActionLimits {
  private readonly redis: RedisClient & LimitCommands;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    /** How long a slot is held at most if its worker dies without giving it back. */
    private readonly leaseMs: number,
  ) {
    this.redis = withCommand<LimitCommands>(redis, ACQUIRE_SLOT);
  }

  static applies(settings: ActionSettings | undefined): boolean {
    return Boolean(settings?.rate_limit ?? settings?.max_concurrent);
  }

  /**
   * Takes a slot for the job's call: 0 when taken, else how many ms to wait before trying again.
   * `waitsSoFar` spreads out jobs that wait for an in-flight slot.
   */
  async acquire(
    action: string,
    jobId: string,
    settings: ActionSettings,
    waitsSoFar: number,
  ): Promise<number> {
    const wait = await this.redis.pwAcquireSlot(
      keys.rateWindow(this.prefix, action),
      keys.inFlight(this.prefix, action),
      jobId,
      settings.rate_limit?.max ?? 0,
      settings.rate_limit?.duration_ms ?? 0,
      settings.max_concurrent ?? 0,
      this.leaseMs,
    );
    if (wait === 0) return 0;
    if (wait < 0) return concurrencyWait(waitsSoFar);
    // Jobs that wait for the same window do not all come back in the same millisecond.
    const spread = (settings.rate_limit?.duration_ms ?? 0) / (settings.rate_limit?.max ?? 1);
    return wait + Math.round(Math.random() * spread);
  }

  /** Gives the in-flight slot back once the call is over. */
  async release(action: string, jobId: string): Promise<void> {
    await this.redis.zrem(keys.inFlight(this.prefix, action), jobId);
  }
}
