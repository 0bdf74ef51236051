import { keys } from '@pw/shared/queue';
import type { Partitions } from '@pw/shared/queue';
import type { RedisClient } from '@pw/shared/runtime';

/**
 * What the recorder does to Redis's hot records once a batch is in the store: a webhook the store
 * now has finished for good (completed, or discarded) keeps its record only `RECORD_TTL_SECONDS`
 * more, never longer than it had. It writes no field: each change of a record is written by the
 * process that made it. One pipeline per partition; writing it twice changes nothing.
 */
export class HotRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly partitions: Partitions,
    private readonly recordTtlSeconds: number,
  ) {}

  async shorten(finished: readonly string[]): Promise<void> {
    if (finished.length === 0) return;
    const pipelines = new Map<number, ReturnType<RedisClient['pipeline']>>();
    for (const webhookId of finished) {
      const partition = this.partitions.ofWebhookId(webhookId);
      let pipe = pipelines.get(partition);
      if (!pipe) pipelines.set(partition, (pipe = this.redis.pipeline()));
      // Never longer than it had (`LT`; a key without a time counts as kept for ever).
      pipe.expire(
        keys.outcome(this.partitions.prefix(partition), webhookId),
        this.recordTtlSeconds,
        'LT',
      );
    }
    const results = await Promise.all([...pipelines.values()].map((pipe) => pipe.exec()));
    const failure = results.flatMap((replies) => replies ?? []).find(([error]) => error);
    if (failure?.[0]) throw failure[0];
  }
}
