import { keys } from '../queue/redis-keys.js';
import type { Problem } from '../events/problem.js';

/**
 * The record store's change stream (docs/records.md): every change to a webhook's record and
 * every operator change is appended to one Redis stream, in the same command as the change itself,
 * and the recorder writes it to PostgreSQL in batches. Nothing on the hot path waits for
 * PostgreSQL; a change waits in the stream while PostgreSQL is away. Here, what the writers
 * append; its reader (`RecordChange`, `RECORDER_GROUP`, `parseChange`, `RecordStreams`, the
 * changes set aside) is `@pw/records` (packages/records/src/stream/).
 */
export const recordStreamKey = (prefix: string): string => keys.records(prefix);

/** The `k` of a stream entry that is a `CompletedEntry` (an action's call completed). */
export const COMPLETED_KIND = 'completed';

/** What an attempt ended as, in an action's `history`. */
export const ATTEMPT_OUTCOMES = ['completed', 'retrying', 'failed', 'skipped', 'held'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** One entry of an action's `history`. */
export interface AttemptRecord {
  /** The action's call count when it ended (a hold without a call repeats the last number). */
  attempt: number;
  started_at: string;
  finished_at: string;
  outcome: AttemptOutcome;
  /** The partner's HTTP status; null without an answer (network error, no call). */
  status: number | null;
  /** At most 500 characters; null when the attempt completed. */
  error: string | null;
  duration_ms: number;
}

/** The webhook as accepted: written once, when the ingress (or, failing it, the worker) opens it. */
export interface WebhookEntry {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  customer_id: string | null;
  received_at: string;
  actions: string[];
  /** The event as received, without `signature`. */
  event: Record<string, unknown>;
  /** True when an event its entity had was newer (the intake marks it stale); else absent. */
  stale?: boolean;
  /** A quarantined webhook's problems (an authentic event that failed its schema); else absent. */
  problems?: Problem[];
}

/** One operator change: an entry of the audit log. */
export interface AuditRecord {
  at: string;
  /** The basic-auth user who made it. */
  user: string;
  /** `replay`, `bulk_replay`, `rules_replaced`, `circuit_override`, `board_retry`, ... */
  action: string;
  /** What it was done to: a webhook id, a circuit target, a queue, `rules`. */
  target: string;
  details: Record<string, unknown>;
}

/**
 * The `d` of a `completed` entry of the record stream: the action whose call completed, which
 * call of the action it was (`attempt`, the action's `attempts` now), and how that call went.
 */
export interface CompletedEntry {
  webhook_id: string;
  action: string;
  attempt: number;
  started_at: string;
  finished_at: string;
  status: number | null;
  duration_ms: number;
}
