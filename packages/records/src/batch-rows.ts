import { boundedError, isFinished, waitingAction } from '@pw/shared/outcomes';
import type { Problem } from '@pw/shared/events';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import type { WebhookEntry } from '@pw/shared/records';
import type { RecordChange } from './stream/changes.js';

// Rows as the tables take them (jsonb_populate_recordset): keys are column names, `seq` a string
// because JSON numbers lose a bigint's precision.

export interface WebhookRow {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  customer_id: string | null;
  received_at: string;
  finished_at: string | null;
  state: string;
  stale: boolean;
  actions: string[];
  event: Record<string, unknown> | null;
  trace_id: string | null;
  /** A quarantined webhook's problems; null for any other. */
  problems: Problem[] | null;
  seq: string;
}

export interface ActionRow {
  webhook_id: string;
  name: string;
  state: string;
  attempts: number;
  last_error: string | null;
  completed_at: string | null;
  skipped: string | null;
  held: string | null;
  seq: string;
}

export interface AttemptRow {
  webhook_id: string;
  action: string;
  seq: string;
  attempt: number;
  started_at: string;
  finished_at: string;
  outcome: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface AuditRow {
  seq: string;
  at: string;
  user: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
}

export interface BatchRows {
  /**
   * Every webhook the batch changes: its state is worked out again from its actions' rows once
   * they are written (`RECOMPUTE_STATES`), as a completion comes as its action's change alone.
   */
  touched: { webhook_id: string; at: string }[];
  webhooks: WebhookRow[];
  actions: ActionRow[];
  attempts: AttemptRow[];
  audit_entries: AuditRow[];
}

/**
 * The rows a batch of changes writes, one per key: a webhook's and an action's fields come from
 * their newest change (an upsert may not touch a row twice in one statement), but a webhook keeps
 * the event, customer and trace of its `webhook` change whatever came after. Rows are sorted by
 * key, so concurrent writers lock rows in the same order and never deadlock.
 */
export function batchRows(changes: readonly RecordChange[]): BatchRows {
  const webhooks = new Map<string, WebhookRow>();
  const actions = new Map<string, ActionRow>();
  const attempts = new Map<string, AttemptRow>();
  const audit = new Map<string, AuditRow>();
  // Each webhook's newest change's time: when it finished, if this batch finishes it.
  const touched = new Map<string, string>();
  // Changes in order: each row ends with its newest change's fields.
  const setAction = (row: ActionRow) => actions.set(`${row.webhook_id}\n${row.name}`, row);
  for (const change of [...changes].sort((a, b) => compare(a.seq, b.seq))) {
    const seq = change.seq.toString();
    if (change.kind === 'audit') {
      audit.set(seq, { seq, ...change.entry });
      continue;
    }
    touched.set(change.kind === 'completed' ? change.webhook_id : webhookOf(change), change.at);
    if (change.kind === 'completed') {
      const [row, attempt] = completionRows(change, seq);
      setAction(row);
      attempts.set(`${row.webhook_id}\n${row.name}\n${seq}`, attempt);
      continue;
    }
    const [webhook, actionRows] =
      change.kind === 'webhook'
        ? acceptedRows(change.webhook, seq)
        : outcomeRows(change.outcome, change.at, seq);
    const earlier = webhooks.get(webhook.webhook_id);
    webhooks.set(webhook.webhook_id, earlier ? keepAccepted(webhook, earlier) : webhook);
    for (const row of actionRows) setAction(row);
    if (change.kind === 'outcome' && change.attempt) {
      const { action, ...attempt } = change.attempt;
      const row = { webhook_id: webhook.webhook_id, action, seq, ...attempt };
      attempts.set(`${row.webhook_id}\n${action}\n${seq}`, {
        ...row,
        error: row.error === null ? null : boundedError(row.error),
        duration_ms: Math.round(row.duration_ms),
      });
    }
  }
  return {
    touched: [...touched.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([webhook_id, at]) => ({ webhook_id, at })),
    webhooks: sortedValues(webhooks),
    actions: sortedValues(actions),
    attempts: sortedValues(attempts),
    audit_entries: sortedValues(audit),
  };
}

/**
 * A `webhook` change: the webhook as accepted, every action waiting; or kept, quarantined, with
 * its problems and no action.
 */
function acceptedRows(
  webhook: WebhookEntry & { trace_id?: string | null },
  seq: string,
): [WebhookRow, ActionRow[]] {
  const row: WebhookRow = {
    webhook_id: webhook.webhook_id,
    event_type: webhook.event_type,
    entity_id: webhook.entity_id,
    customer_id: webhook.customer_id,
    received_at: webhook.received_at,
    finished_at: null,
    state: webhook.problems ? 'quarantined' : 'queued',
    stale: webhook.stale === true,
    actions: webhook.actions,
    event: webhook.event,
    trace_id: webhook.trace_id ?? null,
    problems: webhook.problems ?? null,
    seq,
  };
  const actions = webhook.actions.map((name) => ({
    webhook_id: webhook.webhook_id,
    ...waitingAction(name),
    seq,
  }));
  return [row, actions];
}

/** An `outcome` change: the whole hot record after it; it knows no event, customer or trace. */
function outcomeRows(outcome: WebhookOutcome, at: string, seq: string): [WebhookRow, ActionRow[]] {
  const row: WebhookRow = {
    webhook_id: outcome.webhook_id,
    event_type: outcome.event_type,
    entity_id: outcome.entity_id,
    customer_id: null,
    received_at: outcome.received_at,
    // A failed webhook may still have actions running: it finishes when the last one does.
    finished_at: isFinished(outcome) ? at : null,
    state: outcome.state,
    stale: outcome.stale,
    actions: outcome.actions.map((action) => action.name),
    event: null,
    trace_id: null,
    problems: null,
    seq,
  };
  const actions = outcome.actions.map(({ name, ...action }) => ({
    webhook_id: outcome.webhook_id,
    name,
    ...action,
    last_error: action.last_error === null ? null : boundedError(action.last_error),
    seq,
  }));
  return [row, actions];
}

const webhookOf = (change: Extract<RecordChange, { kind: 'webhook' | 'outcome' }>): string =>
  change.kind === 'webhook' ? change.webhook.webhook_id : change.outcome.webhook_id;

/** A `completion` change: its action completed, and the call that completed it. */
function completionRows(
  change: Extract<RecordChange, { kind: 'completed' }>,
  seq: string,
): [ActionRow, AttemptRow] {
  const { action, ...attempt } = change.attempt;
  return [
    {
      webhook_id: change.webhook_id,
      name: action,
      state: 'completed',
      attempts: attempt.attempt,
      last_error: null,
      completed_at: attempt.finished_at,
      skipped: null,
      held: null,
      seq,
    },
    {
      webhook_id: change.webhook_id,
      action,
      seq,
      ...attempt,
      error: null,
      duration_ms: Math.round(attempt.duration_ms),
    },
  ];
}

/** The later row, with what only a `webhook` change carries kept from the earlier one. */
const keepAccepted = (later: WebhookRow, earlier: WebhookRow): WebhookRow => ({
  ...later,
  customer_id: later.customer_id ?? earlier.customer_id,
  event: later.event ?? earlier.event,
  trace_id: later.trace_id ?? earlier.trace_id,
  problems: later.problems ?? earlier.problems,
});

const compare = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

const sortedValues = <T>(rows: Map<string, T>): T[] =>
  [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
