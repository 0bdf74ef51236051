import { luaCommand, withCommand } from '@pw/shared/lua';
import { keys } from '@pw/shared/queue';
import { invalidArgument } from '@pw/shared/runtime';
import type { RedisClient } from '@pw/shared/runtime';
import { DASHBOARD_LUA } from './lua/lua-files.js';

export interface LoginLimitOptions {
  /** Failed logins one client address may make in a window. @defaultValue 10 */
  maxFailures?: number;
  /** The window: a fixed span from the address's first failed login. @defaultValue 60000 (a minute) */
  windowMs?: number;
}

/** One login from an address, checked and counted in one command (lua/login-attempt-1.lua). */
export const LOGIN_ATTEMPT = luaCommand({
  name: 'pwLoginAttempt',
  file: 'login-attempt-1.lua',
  sources: [DASHBOARD_LUA],
});

interface LoginCommands {
  pwLoginAttempt(
    key: string,
    failed: 0 | 1,
    max: number,
    windowMs: number,
  ): Promise<[number, number]>;
}

/** Whether a login may go on, or how long its address must wait (`Retry-After`). */
export type LoginVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Failed logins per client address, counted in Redis so that every dashboard process (and a
 * restarted one) shares the count. The check and the count are one command: a burst of parallel
 * guesses gets no more than the limit through.
 */
export class LoginLimit {
  private readonly redis: RedisClient & LoginCommands;
  private readonly maxFailures: number;
  private readonly windowMs: number;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    options: LoginLimitOptions = {},
  ) {
    this.maxFailures = options.maxFailures ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    if (this.maxFailures < 1 || this.windowMs < 1) {
      throw invalidArgument('a login limit needs at least 1 failure and a window of 1 ms');
    }
    this.redis = withCommand<LoginCommands>(redis, LOGIN_ATTEMPT);
  }

  /** Whether a login from `address` may go on; counts it when it `failed` and may. */
  async attempt(address: string, failed: boolean): Promise<LoginVerdict> {
    const [allowed, n] = await this.redis.pwLoginAttempt(
      keys.loginFailures(this.prefix, address),
      failed ? 1 : 0,
      this.maxFailures,
      this.windowMs,
    );
    return allowed === 1
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(n / 1000)) };
  }
}
