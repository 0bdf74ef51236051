export const ACTION_STATES = ['waiting', 'active', 'retrying', 'completed', 'failed'] as const;
export type ActionState = (typeof ACTION_STATES)[number];
export type WebhookState =
  'queued' | 'processing' | 'completed' | 'failed' | 'quarantined' | 'discarded';
export const SKIP_REASONS = ['stale', 'disabled'] as const;

/** Why an action waits without spending an attempt (`held`). */
export const HELD_REASONS = ['circuit_open', 'entity_busy'] as const;
export type HeldReason = (typeof HELD_REASONS)[number];
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface ActionOutcome {
  name: string;
  state: ActionState;
  /** Every call made for the action, replays included. */
  attempts: number;
  /** Why the last try failed, at most `MAX_ERROR_LENGTH` characters; null once completed. */
  last_error: string | null;
  completed_at: string | null;
  /**
   * Why the action completed without a call: `stale` (a newer event for the entity came first) or
   * `disabled` (`ACTIONS_CONFIG` disabled it after the ingress chose it).
   */
  skipped: SkipReason | null;
  /**
   * Why the action waits without spending an attempt: `circuit_open` while its target's circuit
   * is open; `entity_busy` while a call of the same action for the same entity is in flight.
   */
  held: HeldReason | null;
}

/** What happened to one webhook: the dashboard's `GET /api/webhooks/:id` and `send --wait`. */
export interface WebhookOutcome {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  received_at: string;
  state: WebhookState;
  /** A newer event for the same entity was taken in before this one, or while it ran. */
  stale: boolean;
  actions: ActionOutcome[];
}

/** An action as the intake leaves it: waiting, no attempt made, nothing else known. */
export const waitingAction = (name: string): ActionOutcome => ({
  name,
  state: 'waiting',
  attempts: 0,
  last_error: null,
  completed_at: null,
  skipped: null,
  held: null,
});

/** The webhook state follows from its actions' states. */
export function webhookState(actions: readonly ActionOutcome[]): WebhookState {
  if (actions.some((action) => action.state === 'failed')) return 'failed';
  if (actions.every((action) => action.state === 'completed')) return 'completed';
  if (actions.some((action) => action.state !== 'waiting')) return 'processing';
  return 'queued';
}

/** True once every action has completed or failed for good. */
export const isFinished = (outcome: WebhookOutcome): boolean =>
  outcome.actions.every((action) => action.state === 'completed' || action.state === 'failed');

/** An action's outcome from its record's `<name>:<field>` fields; a field not there as waiting. */
function actionFromRecord(record: Record<string, string>, name: string): ActionOutcome {
  const waiting = waitingAction(name);
  const field = (part: string) => record[`${name}:${part}`];
  return {
    name,
    state: (field('state') as ActionState | undefined) ?? waiting.state,
    attempts: Number(field('attempts') ?? waiting.attempts),
    last_error: field('last_error') ?? waiting.last_error,
    completed_at: field('completed_at') ?? waiting.completed_at,
    skipped: SKIP_REASONS.find((reason) => reason === field('skipped')) ?? waiting.skipped,
    held: HELD_REASONS.find((reason) => reason === field('held')) ?? waiting.held,
  };
}

/** The outcome a record's hash (or its snapshot in the record stream) describes. */
export function fromRecord(record: Record<string, string>): WebhookOutcome {
  const names = JSON.parse(record.actions ?? '[]') as string[];
  const actions = names.map((name) => actionFromRecord(record, name));
  return {
    webhook_id: record.webhook_id ?? '',
    event_type: record.event_type ?? '',
    entity_id: record.entity_id ?? '',
    received_at: record.received_at ?? '',
    // Kept without actions until an operator releases or discards it.
    state:
      record.quarantined === '1'
        ? 'quarantined'
        : record.discarded === '1'
          ? 'discarded'
          : webhookState(actions),
    stale: record.stale === '1',
    actions,
  };
}

/**
 * The fields of a record that hold `outcome` (the dashboard's restore of a record Redis no longer
 * holds, from the record store's copy).
 */
export function recordOf(outcome: WebhookOutcome): Record<string, string> {
  const fields: Record<string, string> = {
    webhook_id: outcome.webhook_id,
    event_type: outcome.event_type,
    entity_id: outcome.entity_id,
    received_at: outcome.received_at,
    actions: JSON.stringify(outcome.actions.map((action) => action.name)),
  };
  if (outcome.stale) fields.stale = '1';
  if (outcome.state === 'quarantined') fields.quarantined = '1';
  if (outcome.state === 'discarded') fields.discarded = '1';
  for (const action of outcome.actions) {
    fields[`${action.name}:state`] = action.state;
    fields[`${action.name}:attempts`] = String(action.attempts);
    if (action.last_error !== null) fields[`${action.name}:last_error`] = action.last_error;
    if (action.completed_at !== null) fields[`${action.name}:completed_at`] = action.completed_at;
    if (action.skipped !== null) fields[`${action.name}:skipped`] = action.skipped;
  }
  return fields;
}
