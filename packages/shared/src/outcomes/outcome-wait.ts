import { PwError } from '../errors.js';
import type { Partitions } from '../queue/partitions.js';
import type { RedisClient } from '../redis.js';
import type { WebhookOutcome } from './webhook-outcome.js';

/** `waitUntil` ran out of time before the outcome was as awaited. */
export const OUTCOME_WAIT_TIMED_OUT = 'outcome_wait_timed_out';

/** Where an awaited outcome is read, and the channel that announces its changes. */
export interface OutcomeSource {
  channel: string;
  get(webhookId: string): Promise<WebhookOutcome | null>;
}

/**
 * Resolves with the outcome as soon as `condition` holds for it, re-reading on each change
 * announced on `source.channel` (`subscriber` must be a connection of its own; with partitions,
 * `source` is the webhook's partition's, `sourceOfWebhook`); rejects with a
 * `PwError` (`OUTCOME_WAIT_TIMED_OUT`) after `timeoutMs`.
 */
export async function waitForOutcome(
  source: OutcomeSource,
  webhookId: string,
  subscriber: RedisClient,
  condition: (outcome: WebhookOutcome) => boolean,
  options: { timeoutMs: number },
): Promise<WebhookOutcome> {
  let wake: () => void = () => undefined;
  const onMessage = (_channel: string, id: string) => id === webhookId && wake();
  subscriber.on('message', onMessage);
  await subscriber.subscribe(source.channel);
  const deadline = Date.now() + options.timeoutMs;
  try {
    for (;;) {
      const changed = new Promise<void>((resolve) => (wake = resolve));
      const outcome = await source.get(webhookId);
      if (outcome && condition(outcome)) return outcome;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new PwError(
          OUTCOME_WAIT_TIMED_OUT,
          `webhook ${webhookId} not as awaited after ${options.timeoutMs} ms: ${JSON.stringify(outcome)}`,
        );
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([changed, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  } finally {
    subscriber.off('message', onMessage);
    await subscriber.unsubscribe(source.channel);
  }
}

/**
 * Of `sources`, one per partition (`partitions.prefixes`' order), the one of the partition the
 * webhook id names: where its outcome record is kept and its changes are announced.
 */
export function sourceOfWebhook<S extends OutcomeSource>(
  partitions: Partitions,
  sources: readonly S[],
  webhookId: string,
): S {
  const index = partitions.ofWebhookId(webhookId);
  const source = sources[index];
  if (!source)
    throw new RangeError(`no outcome source for partition ${index} of ${sources.length}`);
  return source;
}
