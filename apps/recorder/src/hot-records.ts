import {
  ACTION_COUNTS_KEEP_SECONDS,
  completedFirstFields,
  countMinute,
  keys,
  outcomeKey,
} from '@pw/shared';
import type { Partitions, RecordChange, RedisClient } from '@pw/shared';

type Completion = Extract<RecordChange, { kind: 'completion' }>;

/**
 * What the recorder writes back to Redis's hot records once a batch is in the store. An action
 * that completed on its first call came to it as one stream entry, and nothing else was written
 * (`OutcomeStore.settled`): its record gets the completion (the first call counted) and the
 * minute's count of completed actions gets it. The worker announced the completion, and readers
 * of the record take it off the finished job until then. A webhook the store now has as
 * completed keeps its record only `RECORD_TTL_SECONDS` more (never longer than it had). One
 * pipeline per partition; every write can be made twice (a batch written again) but the minutes'
 * counts, which a recorder stopping between the two would count twice.
 */
export class HotRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly partitions: Partitions,
    private readonly recordTtlSeconds: number,
  ) {}

  async write(completions: readonly Completion[], completed: readonly string[]): Promise<void> {
    if (completions.length === 0 && completed.length === 0) return;
    const pipelines = new Map<number, ReturnType<RedisClient['pipeline']>>();
    const pipeline = (webhookId: string) => {
      const partition = this.partitions.ofWebhookId(webhookId);
      let found = pipelines.get(partition);
      if (!found) pipelines.set(partition, (found = this.redis.pipeline()));
      return { prefix: this.partitions.prefix(partition), pipe: found };
    };
    const finished = new Set(completed);
    const counts = new Map<string, { webhookId: string; count: number }>();
    for (const { webhook_id: webhookId, attempt } of completions) {
      const { prefix, pipe } = pipeline(webhookId);
      const key = outcomeKey(prefix, webhookId);
      pipe.hset(key, ...completedFirstFields(attempt.action, attempt.finished_at));
      // A record gone meanwhile is not kept for ever as these fields (one the store has as
      // completed gets its time below).
      if (!finished.has(webhookId)) pipe.expire(key, this.recordTtlSeconds, 'NX');
      const countKey = keys.actionCounts(prefix, countMinute(new Date(attempt.finished_at)));
      const count = counts.get(countKey) ?? { webhookId, count: 0 };
      counts.set(countKey, { webhookId, count: count.count + 1 });
    }
    for (const webhookId of finished) {
      const { prefix, pipe } = pipeline(webhookId);
      // Never longer than it had (`LT`; a key without a time counts as kept for ever).
      pipe.expire(outcomeKey(prefix, webhookId), this.recordTtlSeconds, 'LT');
    }
    for (const [countKey, { webhookId, count }] of counts) {
      const { pipe } = pipeline(webhookId);
      pipe.hincrby(countKey, 'completed', count);
      pipe.expire(countKey, ACTION_COUNTS_KEEP_SECONDS, 'NX');
    }
    const results = await Promise.all([...pipelines.values()].map((pipe) => pipe.exec()));
    const failure = results.flatMap((replies) => replies ?? []).find(([error]) => error);
    if (failure?.[0]) throw failure[0];
  }
}
