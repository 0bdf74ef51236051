import type { Queue } from 'bullmq';
import { ACTION_COUNTS, countMinute, keys } from '@pw/shared';
import type { ActionCount, RedisClient } from '@pw/shared';
import type { TrendMinute, Trends } from '@pw/shared/operator-api';

export type { TrendMinute, Trends };

const MINUTES = 60;

/**
 * The console's trends, from per-minute counters in Redis: the ingress counts what it accepts in
 * its add script, the worker what it completes, fails and holds in its outcome script. Redis
 * rather than the record store, so that the charts are live when the store or the recorder is
 * behind, and cost 120 hash reads however busy the hour was, not a scan of its attempts.
 */
export async function readTrends(
  redis: RedisClient,
  prefix: string,
  queues: readonly Queue[],
  now = new Date(),
): Promise<Trends> {
  const minutes = Array.from({ length: MINUTES }, (_, i) =>
    countMinute(new Date(now.getTime() - (MINUTES - 1 - i) * 60_000)),
  );
  const pipeline = redis.pipeline();
  for (const minute of minutes) {
    pipeline.hget(keys.ingressCounts(prefix, minute), 'accepted');
    pipeline.hmget(keys.actionCounts(prefix, minute), ...ACTION_COUNTS);
  }
  const replies = (await pipeline.exec()) ?? [];
  const count = (value: unknown) => Number(value ?? 0);
  const counts = minutes.map((at, i) => {
    const [, accepted] = replies[2 * i] ?? [];
    const [, actions] = replies[2 * i + 1] ?? [];
    const byName = (actions ?? []) as (string | null)[];
    return {
      at,
      accepted: count(accepted),
      ...(Object.fromEntries(ACTION_COUNTS.map((name, n) => [name, count(byName[n])])) as Record<
        ActionCount,
        number
      >),
    };
  });
  const ages = await Promise.all(queues.map((queue) => oldestWaitingSeconds(queue, now)));
  return {
    minutes: counts,
    oldest_waiting_seconds: Object.fromEntries(
      queues.map((queue, i) => [queue.name, ages[i] ?? null]),
    ),
  };
}

/**
 * Seconds the oldest job of `queue`'s wait list has been waiting: since it was added (or its delay
 * ended), or since its last start for a job back from a retry; null when none waits.
 */
export async function oldestWaitingSeconds(queue: Queue, now = new Date()): Promise<number | null> {
  const [oldest] = await queue.getJobs(['wait'], 0, 0, true);
  if (!oldest) return null;
  const since = Math.max(oldest.timestamp + (oldest.delay ?? 0), oldest.processedOn ?? 0);
  return Math.max(0, (now.getTime() - since) / 1000);
}
