import { invalidArgument, withCommand } from '@pw/shared';
import type { LuaCommand, RedisClient } from '@pw/shared';

export interface LoginLimitOptions {
  /** Failed logins one client address may make in a window. @defaultValue 10 */
  maxFailures?: number;
  /** The window: a fixed span from the address's first failed login. @defaultValue 60000 (a minute) */
  windowMs?: number;
}

/**
 * KEYS[1]: one address's count of failed logins, which expires when its window ends. ARGV: 1 when
 * this login failed (else 0), the failures allowed, the window in ms. An address at the limit is
 * refused, whatever it sent: returns {0, ms until its window ends}. Otherwise a failure is counted
 * (the first one starts the window): returns {1, failures}.
 */
const LOGIN_ATTEMPT: LuaCommand = {
  name: 'pwLoginAttempt',
  numberOfKeys: 1,
  lua: `
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
if failures >= tonumber(ARGV[2]) then
  local left = redis.call('PTTL', KEYS[1])
  if left > 0 then return {0, left} end
end
if ARGV[1] == '1' then
  failures = redis.call('INCR', KEYS[1])
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
end
return {1, failures}
`,
};

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
      `${this.prefix}:dashboard:login-failures:${address}`,
      failed ? 1 : 0,
      this.maxFailures,
      this.windowMs,
    );
    return allowed === 1
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(n / 1000)) };
  }
}
