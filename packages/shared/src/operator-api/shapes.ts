// The shapes the operator API answers with (docs/operations.md), in one place for the server that
// writes them and the console that reads them. Types only, from modules that import nothing, so
// that the console (a browser program) can import them without any of the server.
import type { Problem } from '../events/problem.js';
import type { ActionOutcome, WebhookState } from '../outcomes/webhook-outcome.js';
import type { AttemptRecord, AuditRecord } from '../records/record-changes.js';

export type {
  ActionOutcome,
  ActionState,
  SkipReason,
  WebhookState,
} from '../outcomes/webhook-outcome.js';
export type { AttemptRecord, AuditRecord } from '../records/record-changes.js';
export type { Problem } from '../events/problem.js';
export type { CircuitState, CircuitView } from '../circuits/circuit-keys.js';

/** A webhook as search lists it (docs/records.md): its outcome record without event or history. */
export interface WebhookSummary {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  customer_id: string | null;
  received_at: string;
  /** When the last action finished, null while any is still to run. */
  finished_at: string | null;
  state: WebhookState;
  stale: boolean;
  trace_id: string | null;
  /** In the webhook's order of actions. */
  actions: ActionOutcome[];
}

/** An action with its last 20 attempts, oldest first. */
export interface ActionRecord extends ActionOutcome {
  history: AttemptRecord[];
}

/** A webhook's whole outcome record, as `GET /api/webhooks/:id` answers it (docs/records.md). */
export interface WebhookRecord extends Omit<WebhookSummary, 'actions'> {
  /** The event as received; null when only its outcome changes have been recorded. */
  event: Record<string, unknown> | null;
  actions: ActionRecord[];
  /**
   * Why its event failed its schema when it arrived, for a webhook that was quarantined (kept after
   * its release or discard); null for any other webhook.
   */
  problems: Problem[] | null;
}

/** The most problems a quarantined webhook's summary lists (`problem_count` counts them all). */
export const SUMMARY_PROBLEMS = 10;

/**
 * A quarantined webhook as `GET /api/quarantine` lists it: why (its first `SUMMARY_PROBLEMS`
 * problems), when, and how large its event is, never the event itself, so that a page weighs the
 * same whatever the events weigh.
 */
export interface QuarantinedSummary {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  received_at: string;
  /** The kept event's size: the bytes of its JSON text as the store keeps it. */
  size: number;
  /** How many problems it has; `problems` lists the first `SUMMARY_PROBLEMS`. */
  problem_count: number;
  problems: Problem[];
}

/** `GET /api/quarantine/{webhook_id}`: its summary with every problem, and the event as received. */
export interface QuarantinedEvent extends QuarantinedSummary {
  event: Record<string, unknown>;
}

/** A page of `GET /api/quarantine`. */
export interface QuarantinePage {
  quarantined: QuarantinedSummary[];
  /** Null on the last page. */
  next_cursor: string | null;
}

/** A page of `GET /api/webhooks` (search). */
export interface SearchPage {
  webhooks: WebhookSummary[];
  /** Null on the last page. */
  next_cursor: string | null;
}

/** A page of `GET /api/audit`. */
export interface AuditPage {
  entries: AuditRecord[];
  next_cursor: string | null;
}

/** An action that failed for good, as `GET /api/dead-letters` lists it. */
export interface DeadLetter {
  webhook_id: string;
  action: string;
  event_type: string;
  failed_reason: string;
  attempts: number;
  failed_at: string | null;
}

/** A page of dead letters; `next_cursor` null when there is nothing after it. */
export interface DeadLetterPage {
  dead_letters: DeadLetter[];
  next_cursor: string | null;
}

/**
 * One minute of the console's trends: webhooks accepted, actions completed, failed for good and
 * held (the worker's counts are `ACTION_COUNTS`).
 */
export interface TrendMinute {
  at: string;
  accepted: number;
  completed: number;
  failed: number;
  held: number;
}

/** `GET /api/trends`. */
export interface Trends {
  /** The last hour, oldest first, the current minute last. */
  minutes: TrendMinute[];
  /** Per queue, seconds since its oldest waiting job was added or last started; null when none. */
  oldest_waiting_seconds: Record<string, number | null>;
}

/** How one release of a quarantined webhook ended. */
export type ReleaseResult =
  | { webhook_id: string; outcome: 'released'; actions_triggered: string[] }
  | { webhook_id: string; outcome: 'still_invalid'; problems: Problem[] }
  | { webhook_id: string; outcome: 'not_quarantined' };

/** `POST /api/quarantine/release?dry_run=true`: what the running schema would release. */
export interface ReleasePreview {
  would_release: number;
  still_invalid: number;
  /** The first 100 the filters match, each with whether it passes the running schema now. */
  quarantined: (QuarantinedSummary & { releasable: boolean })[];
}

/** `POST /api/quarantine/release`: how each release ended, counted, and the first 100. */
export interface BulkRelease {
  released: number;
  still_invalid: number;
  not_quarantined: number;
  webhooks: ReleaseResult[];
}
