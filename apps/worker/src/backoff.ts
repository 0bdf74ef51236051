import type { MinimalJob } from 'bullmq';
import { BACKOFF_TYPE } from '@pw/shared/queue';
import { RetryableError } from '@pw/shared/runtime';
import type { ActionJobData, BackoffPolicy } from '@pw/shared/queue';

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

/**
 * The backoff strategy of action jobs: the job's own policy, at least the `Retry-After` the
 * failed try's `RetryableError` carries (the action processor throws one for every retry).
 */
export function actionBackoff(
  attemptsMade: number,
  type: string | undefined,
  error: Error | undefined,
  job: MinimalJob<ActionJobData> | undefined,
): number {
  if (type !== BACKOFF_TYPE || !job) return 0;
  const retryAfter = error instanceof RetryableError ? error.retryAfterMs : undefined;
  return retryDelay(attemptsMade, job.data.backoff, retryAfter);
}
