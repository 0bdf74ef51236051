import type { BackoffPolicy } from '@pw/shared';

/**
 * The delay before retry number `attemptsMade`: fixed, or exponential with jitter (between half
 * and all of the doubled delay), and never shorter than the partner's `Retry-After`.
 */
export function retryDelay(
  attemptsMade: number,
  policy: BackoffPolicy,
  retryAfterMs: number | undefined,
  random = Math.random,
): number {
  const base =
    policy.type === 'fixed'
      ? policy.delay_ms
      : Math.round(policy.delay_ms * 2 ** Math.max(0, attemptsMade - 1) * (0.5 + random() / 2));
  return Math.max(base, retryAfterMs ?? 0);
}
