import { acknowledgementSchema } from '@pw/shared/events';
import { OutcomeStore, sourceOfWebhook } from '@pw/shared/outcomes';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import type { Partitions } from '@pw/shared/queue';
import type { RedisClient } from '@pw/shared/runtime';

export interface AwaitOutcomesOptions {
  redis: RedisClient;
  /** A connection of its own, for the change channels. */
  subscriber: RedisClient;
  /** `QUEUE_PREFIX` and `QUEUE_PARTITIONS`: each webhook is waited for in its own partition. */
  partitions: Partitions;
  /** When an outcome is as awaited (`reportingHeld`). */
  condition: (outcome: WebhookOutcome) => boolean;
  timeoutMs: number;
}

/**
 * The outcome of each acknowledged webhook among `answers` (the ingress's answers; the others are
 * passed over), in order, each once `condition` holds for it: read from the outcome record of the
 * webhook's partition and re-read on that partition's change channel.
 */
export async function* awaitOutcomes(
  answers: readonly unknown[],
  options: AwaitOutcomesOptions,
): AsyncGenerator<WebhookOutcome> {
  const { redis, partitions } = options;
  const stores = partitions.prefixes.map(
    (queuePrefix) => new OutcomeStore(redis, { queuePrefix, recordTtlSeconds: 0 }),
  );
  for (const answer of answers) {
    const ack = acknowledgementSchema.safeParse(answer);
    if (!ack.success) continue;
    const { webhook_id: webhookId } = ack.data;
    yield await sourceOfWebhook(partitions, stores, webhookId).waitUntil(
      webhookId,
      options.subscriber,
      options.condition,
      { timeoutMs: options.timeoutMs },
    );
  }
}
