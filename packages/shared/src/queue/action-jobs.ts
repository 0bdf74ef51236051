import type { JobsOptions } from 'bullmq';
import type { ActionsConfig } from '../actions/actions-config.js';
import { actionJobId, deadLetterSeconds } from './queues.js';
import type { ActionJobData, BackoffPolicy, AcceptedWebhook } from './queues.js';

/** The default retry policy (`ACTION_ATTEMPTS`, `ACTION_BACKOFF`, ...) and `RECORD_TTL_SECONDS`. */
export interface RetryDefaults {
  attempts: number;
  backoff: BackoffPolicy;
  recordTtlSeconds: number;
}

/**
 * BullMQ's events stream of every queue (`streams.events.maxLen`, kept in the queue's meta hash,
 * which each `Queue` writes when it starts: every `Queue` of the system passes it, or the last one
 * to start sets BullMQ's default of 10,000). Nothing reads the stream (no `QueueEvents`), so it is
 * kept short: BullMQ trims it with `XTRIM MAXLEN ~`, which drops whole nodes of up to 100
 * entries, so it holds between 100 and about 200 entries, a few kilobytes per queue.
 */
export const QUEUE_STREAMS = { events: { maxLen: 100 } };

/** The custom backoff type: the worker's strategy reads the policy from the job. */
export const BACKOFF_TYPE = 'partner-webhooks';

/**
 * The action jobs of a webhook, one per action of its ack, with each action's attempts and
 * backoff. An action disabled since the ingress chose it gets its job too: the action processor
 * records it as skipped, so the outcome record lists every action of the ack.
 */
export function actionJobs(
  webhook: AcceptedWebhook,
  config: ActionsConfig,
  defaults: RetryDefaults,
): { name: string; data: ActionJobData; opts: JobsOptions }[] {
  return webhook.actions.map((action) => {
    const settings = config.actions[action];
    return {
      name: action,
      data: {
        webhook_id: webhook.webhook_id,
        action,
        event_type: webhook.event_type,
        event: webhook.event,
        backoff: settings?.backoff ?? defaults.backoff,
        entity_id: webhook.entity_id,
        received_at: webhook.received_at,
        ...(webhook.order_ms === undefined ? {} : { order_ms: webhook.order_ms }),
      },
      opts: {
        jobId: actionJobId(webhook.webhook_id, action),
        attempts: settings?.attempts ?? defaults.attempts,
        backoff: { type: BACKOFF_TYPE },
        // A job held through a long outage logs each probe it made: the last 50 are kept.
        keepLogs: 50,
        removeOnComplete: { age: defaults.recordTtlSeconds },
        removeOnFail: { age: deadLetterSeconds(defaults.recordTtlSeconds) },
      },
    };
  });
}
