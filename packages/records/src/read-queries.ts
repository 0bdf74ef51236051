import { PwError } from '@pw/shared/runtime';
import { INVALID_CURSOR, decodeCursor, pageLimit, parseTime } from './query-input.js';
import type { AuditQuery, SearchFilter } from './record-types.js';

// The store's read statements, built here so that tests can EXPLAIN exactly what the store runs.

/** A statement and its parameters; `limit`: the page size asked for (one more row is fetched). */
export interface Query {
  text: string;
  values: unknown[];
}

export interface PageQuery extends Query {
  limit: number;
}

const SUMMARY_COLUMNS = `webhook_id, event_type, entity_id, customer_id, received_at, finished_at,
  state, stale, trace_id, actions`;

/** Equality filters, each served by an index on (column, received_at desc, webhook_id desc). */
const FILTER_COLUMNS = ['entity_id', 'customer_id', 'event_type', 'state'] as const;

/**
 * Columns whose index holds the md5 digest of the value (ids of any length): a match compares the
 * digest, which the index serves, and the value, which keeps the exact matches only.
 */
const DIGEST_INDEXED: ReadonlySet<string> = new Set(['entity_id', 'customer_id']);

/** `column = param`, written so that the column's index serves it. */
const equals = (column: string, param: string): string =>
  DIGEST_INDEXED.has(column)
    ? `md5(${column}) = md5(${param}) and ${column} = ${param}`
    : `${column} = ${param}`;

/** The columns `q` is matched against, each the first column of an index (the key, or a search's). */
const Q_COLUMNS = ['webhook_id', 'entity_id', 'customer_id'] as const;

/**
 * One page of webhooks matching every filter given, newest first: received_at, then webhook_id
 * (ties are common at millisecond precision), continuing after the cursor's position. `q` matches
 * any of three columns: one page per column, each read from its own index, then merged; an `or`
 * would leave PostgreSQL to read the whole time index, or to sort every match, for one page.
 */
export function searchQuery(filter: SearchFilter): PageQuery {
  const values: unknown[] = [];
  const param = (value: unknown): string => `$${values.push(value)}`;
  const where: string[] = [];
  for (const column of FILTER_COLUMNS) {
    const value = filter[column];
    if (value) where.push(equals(column, param(value)));
  }
  if (filter.from)
    where.push(`received_at >= ${param(isoParam(filter.from, 'from'))}::timestamptz`);
  if (filter.to) where.push(`received_at < ${param(isoParam(filter.to, 'to'))}::timestamptz`);
  if (filter.cursor) {
    const { time, key } = decodeCursor(filter.cursor);
    where.push(`(received_at, webhook_id) < (${param(time)}::timestamptz, ${param(key)})`);
  }
  const limit = pageLimit(filter.limit, 50, 500);
  const page = (conditions: string[]) => `select ${SUMMARY_COLUMNS} from webhooks
    ${conditions.length > 0 ? `where ${conditions.join(' and ')}` : ''}
    order by received_at desc, webhook_id desc limit ${param(limit + 1)}`;
  if (!filter.q) return { text: page(where), values, limit };
  const q = param(filter.q);
  const pages = Q_COLUMNS.map((column) => `(${page([equals(column, q), ...where])})`);
  const text = `select * from (${pages.join(' union ')}) as matches
    order by received_at desc, webhook_id desc limit ${param(limit + 1)}`;
  return { text, values, limit };
}

/** The actions of the given webhooks (a page of them, or one). */
export const actionsQuery = (webhookIds: readonly string[]): Query => ({
  text: `select webhook_id, name, state, attempts, last_error, completed_at, skipped, held
    from actions where webhook_id = any($1::text[])`,
  values: [webhookIds],
});

/** One webhook, its event included. */
export const webhookQuery = (webhookId: string): Query => ({
  text: `select ${SUMMARY_COLUMNS}, event, problems from webhooks where webhook_id = $1`,
  values: [webhookId],
});

/** The last 20 attempts of each of a webhook's actions, oldest first. */
export const historyQuery = (webhookId: string): Query => ({
  text: `select a.name as action, h.* from actions a
    cross join lateral (
      select seq, attempt, started_at, finished_at, outcome, status, error, duration_ms
      from attempts t where t.webhook_id = a.webhook_id and t.action = a.name
      order by t.seq desc limit 20
    ) h
    where a.webhook_id = $1
    order by a.name, h.seq`,
  values: [webhookId],
});

/** One page of the audit log, newest first. */
export function auditQuery(query: AuditQuery): PageQuery {
  const limit = pageLimit(query.limit, 100, 1000);
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  if (after && !/^\d{1,18}$/.test(after.key)) {
    throw new PwError(INVALID_CURSOR, 'the cursor is malformed');
  }
  return {
    text: `select seq, at, "user", action, target, details from audit_entries
      ${after ? 'where (at, seq) < ($2::timestamptz, $3::bigint)' : ''}
      order by at desc, seq desc limit $1`,
    values: after ? [limit + 1, after.time, after.key] : [limit + 1],
    limit,
  };
}

const isoParam = (value: string, name: string): string => parseTime(value, name).toISOString();
