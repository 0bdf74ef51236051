import type { Queue } from 'bullmq';
import { countMinute } from '@pw/shared/outcomes';
import { ACTION_COUNTS, keys } from '@pw/shared/queue';
import type { ActionCount, Partitions } from '@pw/shared/queue';
import type { RedisClient } from '@pw/shared/runtime';
import type { TrendMinute, Trends } from '@pw/shared/operator-api';

export type { TrendMinute, Trends };

const MINUTES = 60;

/** One minute's counts as one partition holds them. */
type MinuteCounts = Omit<TrendMinute, 'at'>;

/**
 * The console's trends, from per-minute counters in Redis, summed over the partitions: the
 * ingress counts what it accepts in its intake script, the worker what it completes, fails and
 * holds with the change to the webhook's record, each in the webhook's partition. Redis rather
 * than the record store, so that the charts are live when the store or the recorder is behind,
 * and cost 120 hash reads per partition however busy the hour was, not a scan of its attempts. `queues`: the queues whose
 * oldest waiting job is shown (a queue of several partitions: the oldest of all).
 */
export async function readTrends(
  redis: RedisClient,
  partitions: Partitions | string,
  queues: readonly Queue[],
  now = new Date(),
): Promise<Trends> {
  const prefixes = typeof partitions === 'string' ? [partitions] : partitions.prefixes;
  const minutes = Array.from({ length: MINUTES }, (_, i) =>
    countMinute(new Date(now.getTime() - (MINUTES - 1 - i) * 60_000)),
  );
  // One pipeline per partition: on a Redis Cluster a pipeline keeps to one hash slot.
  const each = await Promise.all(prefixes.map((prefix) => partitionCounts(redis, prefix, minutes)));
  const counts = minutes.map((at, i) => {
    const total: TrendMinute = { at, accepted: 0, completed: 0, failed: 0, held: 0 };
    for (const partition of each) {
      const minute = partition[i];
      if (!minute) continue;
      total.accepted += minute.accepted;
      for (const name of ACTION_COUNTS) total[name] += minute[name];
    }
    return total;
  });
  return { minutes: counts, oldest_waiting_seconds: await oldestByName(queues, now) };
}

/** Each minute's counts in the partition of `prefix`. */
async function partitionCounts(
  redis: RedisClient,
  prefix: string,
  minutes: readonly string[],
): Promise<MinuteCounts[]> {
  const pipeline = redis.pipeline();
  for (const minute of minutes) {
    pipeline.hget(keys.ingressCounts(prefix, minute), 'accepted');
    pipeline.hmget(keys.actionCounts(prefix, minute), ...ACTION_COUNTS);
  }
  const replies = (await pipeline.exec()) ?? [];
  const count = (value: unknown) => Number(value ?? 0);
  return minutes.map((_, i) => {
    const [, accepted] = replies[2 * i] ?? [];
    const [, actions] = replies[2 * i + 1] ?? [];
    const byName = (actions ?? []) as (string | null)[];
    return {
      accepted: count(accepted),
      ...(Object.fromEntries(ACTION_COUNTS.map((name, n) => [name, count(byName[n])])) as Record<
        ActionCount,
        number
      >),
    };
  });
}

/** The oldest waiting job's age by queue name, over the queues of that name (null: none waits). */
async function oldestByName(
  queues: readonly Queue[],
  now: Date,
): Promise<Record<string, number | null>> {
  const ages = await Promise.all(queues.map((queue) => oldestWaitingSeconds(queue, now)));
  const oldest: Record<string, number | null> = {};
  queues.forEach((queue, i) => {
    const age = ages[i] ?? null;
    const before = oldest[queue.name] ?? null;
    oldest[queue.name] = before === null ? age : age === null ? before : Math.max(before, age);
  });
  return oldest;
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
