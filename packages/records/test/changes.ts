import { waitingAction, webhookState } from '@pw/shared/outcomes';
import type { ActionOutcome, WebhookOutcome } from '@pw/shared/outcomes';
import type { WebhookEntry, AttemptRecord, AuditRecord } from '@pw/shared/records';
import type { RecordChange } from '../src/index.js';

// Builders of record changes as the recorder reads them off the stream.

export const webhookId = (n: number): string => `wh_${String(n).padStart(22, '0')}`;

export function accepted(
  seq: bigint,
  record: Partial<WebhookEntry> & { webhook_id: string },
): RecordChange {
  return {
    kind: 'webhook',
    seq,
    at: record.received_at ?? '2025-03-01T10:00:00.000Z',
    webhook: {
      event_type: 'quote.status_changed',
      entity_id: 'Q-1',
      customer_id: 'C-1',
      received_at: '2025-03-01T10:00:00.000Z',
      actions: ['notify_crm'],
      event: { event_id: `evt_${record.webhook_id}`, status: 'accepted' },
      ...record,
    },
  };
}

/** An action's outcome, waiting with no attempts unless told otherwise. */
export const action = (name: string, fields: Partial<ActionOutcome> = {}): ActionOutcome => ({
  ...waitingAction(name),
  ...fields,
});

/** An `outcome` change: the record after it, its state derived from its actions. */
export function outcome(
  seq: bigint,
  at: string,
  record: Partial<Omit<WebhookOutcome, 'state' | 'actions'>> & {
    webhook_id: string;
    actions: ActionOutcome[];
  },
  attempt: (AttemptRecord & { action: string }) | null = null,
): RecordChange {
  return {
    kind: 'outcome',
    seq,
    at,
    outcome: {
      event_type: 'quote.status_changed',
      entity_id: 'Q-1',
      received_at: '2025-03-01T10:00:00.000Z',
      stale: false,
      ...record,
      state: webhookState(record.actions),
    },
    attempt,
  };
}

export function audit(seq: bigint, entry: Partial<AuditRecord> & { at: string }): RecordChange {
  return {
    kind: 'audit',
    seq,
    at: entry.at,
    entry: { user: 'admin', action: 'replay', target: 'wh_x', details: {}, ...entry },
  };
}

/** A `completion` change: `name`'s first call completed, at `at`. */
export const completion = (
  seq: bigint,
  at: string,
  webhook: string,
  name: string,
): RecordChange => ({
  kind: 'completed',
  seq,
  at,
  webhook_id: webhook,
  attempt: firstCall(name, at, 4),
});

/** The first call of `name`, answered 200 at `at`, as an attempt of its history. */
export const firstCall = (
  name: string,
  at: string,
  durationMs: number,
): AttemptRecord & { action: string } => ({
  action: name,
  attempt: 1,
  started_at: at,
  finished_at: at,
  outcome: 'completed',
  status: 200,
  error: null,
  duration_ms: durationMs,
});
