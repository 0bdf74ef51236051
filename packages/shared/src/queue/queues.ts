import { isActionName } from '../actions/action-table.js';
import type { ActionName } from '../actions/action-table.js';
import type { EventType } from '../events/registry.js';
import type { Problem } from '../events/problem.js';

/** Queue names, one place: the intake adds each webhook's action jobs to `actions`. */
export const QUEUE_NAMES = {
  actions: 'actions',
} as const;

/** The Redis keys and channels, defined in one map (redis-keys.ts) and re-exported here. */
export { channels, keys } from './redis-keys.js';

/** What the worker counts per minute, for the console's trends (`keys.actionCounts`). */
export const ACTION_COUNTS = ['completed', 'failed', 'held'] as const;
export type ActionCount = (typeof ACTION_COUNTS)[number];

/** Seconds a minute's action counts stay in Redis: the console charts the last hour. */
export const ACTION_COUNTS_KEEP_SECONDS = 7200;

/** The event's `timestamp` in ms, or undefined when it has none that reads as a time. */
export function eventTime(event: Record<string, unknown>): number | undefined {
  const time = typeof event.timestamp === 'string' ? Date.parse(event.timestamp) : NaN;
  return Number.isNaN(time) ? undefined : time;
}

/**
 * The time that orders an entity's events (ms; undefined: none): the event's `timestamp`, but
 * never later than when the receiver took it in (`receivedMs`). An event dated ahead of the
 * receiver's clock, as far as `MAX_CLOCK_SKEW_SECONDS` allows, so counts as taken in now: it
 * cannot make the entity's events that follow it look older than itself.
 */
export function orderTime(event: Record<string, unknown>, receivedMs: number): number | undefined {
  const time = eventTime(event);
  if (time === undefined || Number.isNaN(receivedMs)) return time;
  return Math.min(time, receivedMs);
}

/**
 * An accepted webhook, as the intake (`WebhookIntake`) takes it in: what its record opens with
 * and its action jobs are made from.
 */
export interface AcceptedWebhook {
  webhook_id: string;
  event_type: EventType;
  entity_id: string;
  /** ISO time the ingress accepted the event (the ack's `processed_at`). */
  received_at: string;
  /** The actions the routing rules chose (the ack's `actions_triggered`). */
  actions: ActionName[];
  /** The event as received, without `signature`. */
  event: Record<string, unknown>;
  /**
   * The time (ms, on the receiver's clock) that orders the entity's events: the event's
   * `timestamp` read on its sender's clock, never later than its arrival (`SenderClocks`).
   * Absent: `orderTime` (the `timestamp`, never later than `received_at`).
   */
  order_ms?: number;
  /**
   * Present for an authentic event that failed its schema: why (one per field). Such a webhook is
   * kept, quarantined, and sets off no action (docs/webhook-api.md, Quarantine).
   */
  problems?: Problem[];
}

/** 7 days: the least a dead letter, and a webhook's hot record while it is in flight, is kept. */
export const DEAD_LETTER_MIN_SECONDS = 604_800;

/**
 * Seconds a dead letter (an action that failed for good) and its webhook's hot record are kept,
 * so that it can still be replayed: at least 7 days, whatever `RECORD_TTL_SECONDS` says.
 */
export const deadLetterSeconds = (recordTtlSeconds: number): number =>
  Math.max(recordTtlSeconds, DEAD_LETTER_MIN_SECONDS);

/** `<webhook_id>.<action>`: the id of an action's job, so adding it twice adds it once. */
export const actionJobId = (webhookId: string, action: string): string => `${webhookId}.${action}`;

/** The action an action job's id names (`actionJobId` read back); undefined for any other id. */
export function actionOfJobId(jobId: string): ActionName | undefined {
  const dot = jobId.lastIndexOf('.');
  const name = jobId.slice(dot + 1);
  return dot > 0 && isActionName(name) ? name : undefined;
}

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
  /** When the ingress took the webhook in (ISO): with the event's time, it orders the entity's events. */
  received_at?: string;
  /** The webhook's `order_ms`, when the ingress read the event's time on its sender's clock. */
  order_ms?: number;
  /**
   * An operator replayed the job: its record already counts calls, so no try of it is a first
   * call that nothing counted (the worker's common path, `OutcomeStore.settled`).
   */
  replayed?: boolean;
}
