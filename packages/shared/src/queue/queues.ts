import type { JobsOptions } from 'bullmq';
import type { ActionName } from '../actions/action-table.js';
import type { EventType } from '../events/registry.js';

/** Queue names, one place: the ingress adds to `webhooks`, the worker fans out to `actions`. */
export const QUEUE_NAMES = {
  webhooks: 'webhooks',
  actions: 'actions',
} as const;

/** Redis keys the system owns besides BullMQ's, all under the queue prefix (hash tag safe). */
export const keys = {
  /** The newest `timestamp` (epoch ms) taken in for one entity, for out-of-order protection. */
  latest: (prefix: string, eventType: string, entityId: string) =>
    `${prefix}:latest:${eventType}:${entityId}`,
  /** Per-action limits: start times of recent calls, and leases of calls in flight. */
  rateWindow: (prefix: string, action: string) => `${prefix}:limit:${action}:started`,
  inFlight: (prefix: string, action: string) => `${prefix}:limit:${action}:in-flight`,
};

/** What the ingress puts on the `webhooks` queue for each accepted event. */
export interface WebhookJobData {
  webhook_id: string;
  event_type: EventType;
  entity_id: string;
  /** ISO time the ingress accepted the event (the ack's `processed_at`). */
  received_at: string;
  /** The actions the routing rules chose (the ack's `actions_triggered`). */
  actions: ActionName[];
  /** The event as received, without `signature`. */
  event: Record<string, unknown>;
}

export interface RetentionSettings {
  /** Seconds finished jobs are kept (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
  /** Seconds a delivered event is remembered (`DEDUP_WINDOW_SECONDS`). */
  dedupWindowSeconds?: number;
}

/**
 * Job options of a `webhooks` job; its id is the webhook id, so adding it twice adds it once.
 * It is kept at least as long as the deduplication window, since a repeat's ack is read from it.
 */
export function webhookJobOptions(webhookId: string, retention: RetentionSettings): JobsOptions {
  const age = Math.max(retention.recordTtlSeconds, retention.dedupWindowSeconds ?? 0);
  return {
    jobId: webhookId,
    attempts: 5,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: { age },
    removeOnFail: { age },
  };
}

/** `<webhook_id>.<action>`: the id of an action's job, so adding it twice adds it once. */
export const actionJobId = (webhookId: string, action: string): string => `${webhookId}.${action}`;

export interface BackoffPolicy {
  type: 'fixed' | 'exponential';
  delay_ms: number;
}

/** One action of one webhook, as a job on the `actions` queue. */
export interface ActionJobData {
  webhook_id: string;
  action: ActionName;
  event_type: EventType;
  event: Record<string, unknown>;
  backoff: BackoffPolicy;
  /** The entity id (`quote_id`, ...), for out-of-order protection; absent on older jobs. */
  entity_id?: string;
}
