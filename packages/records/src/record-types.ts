// The pages the operator API answers with are the shared operator-API shapes (the console reads
// them too); this package's own inputs and results are below.
export type {
  ActionRecord,
  AuditPage,
  QuarantinedEvent,
  QuarantinedSummary,
  QuarantinePage,
  SearchPage,
  WebhookRecord,
  WebhookSummary,
} from '@pw/shared/operator-api';

/** Search filters, all optional and ANDed; an empty string counts as not given. */
export interface SearchFilter {
  /** One box's text: a webhook id, an entity id or a customer id, matched exactly. */
  q?: string | undefined;
  entity_id?: string | undefined;
  customer_id?: string | undefined;
  event_type?: string | undefined;
  state?: string | undefined;
  /** ISO 8601; received at or after. */
  from?: string | undefined;
  /** ISO 8601; received before. */
  to?: string | undefined;
  /** @defaultValue 50, at most 500 */
  limit?: number | undefined;
  /** `next_cursor` of the page before. */
  cursor?: string | undefined;
}

/** `GET /api/quarantine`'s filters: search's, the state fixed. */
export type QuarantineFilter = Pick<
  SearchFilter,
  'event_type' | 'from' | 'to' | 'limit' | 'cursor'
>;

export interface AuditQuery {
  /** @defaultValue 100, at most 1000 */
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** A minute's running total of one ingress code, as the ingress counts it in Redis. */
export interface IngressCount {
  /** ISO 8601, the start of the minute. */
  minute: string;
  /** `accepted`, `duplicate`, or a refusal's error code. */
  code: string;
  count: number;
}

/** Where the webhooks accepted in [from, to) stand: the ledger (docs/records.md). */
export interface Ledger {
  /** `from` rounded down to the minute, ISO 8601. */
  from: string;
  /** `to` rounded up to the minute, ISO 8601. */
  to: string;
  accepted: number;
  duplicates: number;
  /** Refused requests by error code. */
  refusals: Record<string, number>;
  completed: number;
  failed: number;
  /** Queued or processing. */
  in_flight: number;
  /** Authentic events that failed their schema, kept until released or discarded. */
  quarantined: number;
  /** Quarantined events an operator discarded. */
  discarded: number;
  /** accepted = completed + failed + in_flight + quarantined + discarded */
  balanced: boolean;
}

export interface PurgeOptions {
  /** Rows older than this many days go (`RECORD_RETENTION_DAYS`). */
  retentionDays: number;
  /** Rows per delete statement, so no delete holds its locks long. @defaultValue 1000 */
  batchSize?: number;
  /** The present. @defaultValue now */
  now?: Date;
}

/** Rows removed by a purge; actions and attempts go with their webhooks. */
export interface PurgeResult {
  webhooks: number;
  audit_entries: number;
  ingress_counts: number;
}
