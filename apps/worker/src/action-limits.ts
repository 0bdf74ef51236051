import { luaCommand, SHARED_LUA, withCommand } from '@pw/shared/lua';
import { keys } from '@pw/shared/queue';
import type { ActionSettings } from '@pw/shared/actions';
import type { RedisClient } from '@pw/shared/runtime';
import { WORKER_LUA } from './lua/lua-files.js';

/** Takes a slot for one call, or says how long to wait (lua/acquire-slot-2.lua). */
export const ACQUIRE_SLOT = luaCommand({
  name: 'pwAcquireSlot',
  file: 'acquire-slot-2.lua',
  sources: [WORKER_LUA, SHARED_LUA],
});

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
