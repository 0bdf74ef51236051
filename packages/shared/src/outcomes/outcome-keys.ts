import { actionJobId, QUEUE_NAMES } from '../queue/queues.js';
import type { ActionOutcome } from './webhook-outcome.js';

/** The outcome record of one webhook: a hash, fields per action (`<action>:state`, ...). */
export const outcomeKey = (queuePrefix: string, webhookId: string): string =>
  `${queuePrefix}:outcome:${webhookId}`;

export interface OutcomeStoreSettings {
  queuePrefix: string;
  /** Seconds a record is kept after its last change (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
}

/** The BullMQ job hash of `action` of `webhookId`, in the `actions` queue of its partition. */
export const actionJobKey = (queuePrefix: string, webhookId: string, action: string): string =>
  `${queuePrefix}:${QUEUE_NAMES.actions}:${actionJobId(webhookId, action)}`;

/**
 * What a record says of an action once it completed on its first call, which nothing counted
 * before (the worker's `completedFirstCall`): the fields the recorder sets, and how `get` reads
 * the action meanwhile.
 */
export const completedFirst = (
  action: ActionOutcome,
  completedAt: string,
): Pick<ActionOutcome, 'state' | 'attempts' | 'completed_at' | 'last_error' | 'held'> => ({
  state: 'completed',
  attempts: action.attempts + 1,
  completed_at: completedAt,
  last_error: null,
  held: null,
});

/** The record's fields `completedFirst` stands for: the first call counted, completed. */
export const completedFirstFields = (action: string, finishedAt: string): string[] => [
  `${action}:state`,
  'completed',
  `${action}:completed_at`,
  finishedAt,
  `${action}:attempts`,
  '1',
];
