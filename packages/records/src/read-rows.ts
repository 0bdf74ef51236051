import { waitingAction } from '@pw/shared/outcomes';
import type {
  ActionOutcome,
  ActionState,
  HeldReason,
  SkipReason,
  WebhookState,
} from '@pw/shared/outcomes';
import type { AttemptOutcome, AttemptRecord, AuditRecord } from '@pw/shared/records';
import type { WebhookSummary } from './record-types.js';

// Rows as `pg` reads them (timestamptz as Date, bigint as string) turned into records.

export interface StoredSummary {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  customer_id: string | null;
  received_at: Date;
  finished_at: Date | null;
  state: string;
  stale: boolean;
  trace_id: string | null;
  actions: string[];
}

export interface StoredAction {
  webhook_id: string;
  name: string;
  state: string;
  attempts: number;
  last_error: string | null;
  completed_at: Date | null;
  skipped: string | null;
  held: string | null;
}

export interface StoredAttempt {
  action: string;
  attempt: number;
  started_at: Date;
  finished_at: Date;
  outcome: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface StoredAuditEntry {
  seq: string;
  at: Date;
  user: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
}

/** A webhook's summary, its actions in its own order (one missing from `actions` is waiting). */
export function toSummary(row: StoredSummary, actions: readonly StoredAction[]): WebhookSummary {
  const byName = new Map(actions.map((action) => [action.name, action]));
  return {
    webhook_id: row.webhook_id,
    event_type: row.event_type,
    entity_id: row.entity_id,
    customer_id: row.customer_id,
    received_at: row.received_at.toISOString(),
    finished_at: iso(row.finished_at),
    state: row.state as WebhookState,
    stale: row.stale,
    trace_id: row.trace_id,
    actions: row.actions.map((name) => {
      const action = byName.get(name);
      return action ? toAction(action) : waitingAction(name);
    }),
  };
}

const toAction = (row: StoredAction): ActionOutcome => ({
  name: row.name,
  state: row.state as ActionState,
  attempts: row.attempts,
  last_error: row.last_error,
  completed_at: iso(row.completed_at),
  skipped: row.skipped as SkipReason | null,
  held: row.held as HeldReason | null,
});

export const toAttempt = (row: StoredAttempt): AttemptRecord => ({
  attempt: row.attempt,
  started_at: row.started_at.toISOString(),
  finished_at: row.finished_at.toISOString(),
  outcome: row.outcome as AttemptOutcome,
  status: row.status,
  error: row.error,
  duration_ms: row.duration_ms,
});

export const toAuditEntry = (row: StoredAuditEntry): AuditRecord => ({
  at: row.at.toISOString(),
  user: row.user,
  action: row.action,
  target: row.target,
  details: row.details,
});

const iso = (time: Date | null): string | null => (time === null ? null : time.toISOString());

/** Rows grouped by a key, in their order. */
export function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}
