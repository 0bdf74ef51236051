import type pg from 'pg';
import type { BatchRows } from './batch-rows.js';
import type { IngressCount } from './record-types.js';

// Each table is written with one statement whatever the batch's size: its rows travel as one
// jsonb array and `jsonb_populate_recordset` turns them into rows of the table's own type.

/** Fields the newest change decides. */
const NEWEST_WINS = [
  'event_type',
  'entity_id',
  'received_at',
  'finished_at',
  'state',
  'stale',
  'actions',
] as const;
/** Fields only a `webhook` change carries: set by it whenever it comes, never erased after. */
const ACCEPTED_ONLY = ['customer_id', 'event', 'trace_id', 'problems'] as const;

const newest = (column: string) =>
  `${column} = case when webhooks.seq < excluded.seq then excluded.${column} else webhooks.${column} end`;
const keptOnceSet = (column: string) =>
  `${column} = coalesce(excluded.${column}, webhooks.${column})`;

const UPSERT_WEBHOOKS = `
insert into webhooks select * from jsonb_populate_recordset(null::webhooks, $1::jsonb)
on conflict (webhook_id) do update set
  ${[...NEWEST_WINS.map(newest), ...ACCEPTED_ONLY.map(keptOnceSet)].join(',\n  ')},
  seq = greatest(webhooks.seq, excluded.seq)
-- A change written again, or older than the row, changes nothing, unless it is the webhook
-- change arriving after the webhook's outcome changes.
where webhooks.seq < excluded.seq or (webhooks.event is null and excluded.event is not null)`;

const UPSERT_ACTIONS = `
insert into actions select * from jsonb_populate_recordset(null::actions, $1::jsonb)
on conflict (webhook_id, name) do update set
  state = excluded.state, attempts = excluded.attempts, last_error = excluded.last_error,
  completed_at = excluded.completed_at, skipped = excluded.skipped, held = excluded.held,
  seq = greatest(actions.seq, excluded.seq)
-- Newest wins: every change is in the stream after the hot record has it, so a later change
-- (a snapshot of the whole record) knows of every earlier one.
where actions.seq < excluded.seq`;

/**
 * Each webhook the batch changed, its state worked out again from its actions' rows as
 * `webhookState` does (quarantined and discarded ones aside), with its finishing time set
 * once (the newest change's, $2) or cleared; returns those of them now finished for good
 * (completed, or discarded), whose hot records can go after `RECORD_TTL_SECONDS`.
 */
const RECOMPUTE_STATES = `
with derived as (
  select webhook_id,
    case when bool_or(state = 'failed') then 'failed'
         when bool_and(state = 'completed') then 'completed'
         when bool_or(state <> 'waiting') then 'processing'
         else 'queued' end as state,
    bool_and(state in ('completed', 'failed')) as finished
  from actions where webhook_id = any($1::text[]) group by webhook_id
), times as (
  select * from unnest($1::text[], $2::timestamptz[]) as t(webhook_id, at)
), changed as (
  update webhooks w set state = d.state,
    finished_at = case when d.finished then coalesce(w.finished_at, t.at) end
  from derived d join times t using (webhook_id)
  where w.webhook_id = d.webhook_id and w.state not in ('quarantined', 'discarded')
    and (w.state <> d.state or (w.finished_at is null) = d.finished)
  returning w.webhook_id
)
-- "changed" runs though unread: PostgreSQL runs a data-modifying WITH once, whole.
select webhook_id from derived where state = 'completed'
union
select webhook_id from webhooks where webhook_id = any($1::text[]) and state = 'discarded'`;

const INSERT_ATTEMPTS = `
insert into attempts select * from jsonb_populate_recordset(null::attempts, $1::jsonb)
on conflict do nothing`;

const INSERT_AUDIT_ENTRIES = `
insert into audit_entries select * from jsonb_populate_recordset(null::audit_entries, $1::jsonb)
on conflict do nothing`;

/**
 * A running total never goes down, so a total written late (another recorder's, or one sent
 * again) never lowers the count, and writing it again changes nothing.
 */
const UPSERT_INGRESS_COUNTS = `
insert into ingress_counts select * from jsonb_populate_recordset(null::ingress_counts, $1::jsonb)
on conflict (minute, code) do update set count = excluded.count
where ingress_counts.count < excluded.count`;

/**
 * In JSON text from `JSON.stringify`: `\u0000`, and `\uD800`-`\uDFFF`, which it writes only for a
 * lone surrogate (a pair is written as the character itself); never an escaped backslash followed
 * by "u0000" (`\\u0000`).
 */
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;
/** Whether the text may hold one: the common row has none, and skips the replacement. */
const MAYBE_UNSTORABLE = /\\u(?:0000|d[89a-f])/;

/**
 * Rows as JSON text PostgreSQL takes, the one boundary every text crosses on its way to the store
 * (docs/records.md#text-the-store-keeps): U+0000, which neither its text nor its jsonb can hold,
 * and a lone surrogate, which is no Unicode character and which jsonb refuses (22P02), are each
 * written as U+FFFD, in values and keys alike. The ingress refuses events that hold either; this
 * keeps one that comes another way (a partner's error text, an operator's reason, a change of an
 * older release) from costing a webhook its record.
 */
export function storableJson(rows: unknown): string {
  const json = JSON.stringify(rows);
  return MAYBE_UNSTORABLE.test(json) ? json.replace(UNSTORABLE_ESCAPE, '$1\\ufffd') : json;
}

/**
 * Writes a batch's rows, webhooks first (the other tables refer to them), then works out again
 * the states of the webhooks it changed; returns those now finished for good (their hot records
 * can go after `RECORD_TTL_SECONDS`).
 */
export async function writeRows(client: pg.ClientBase, rows: BatchRows): Promise<string[]> {
  const statements: [string, unknown[]][] = [
    [UPSERT_WEBHOOKS, rows.webhooks],
    [UPSERT_ACTIONS, rows.actions],
    [INSERT_ATTEMPTS, rows.attempts],
    [INSERT_AUDIT_ENTRIES, rows.audit_entries],
  ];
  for (const [sql, tableRows] of statements) {
    if (tableRows.length > 0) await client.query(sql, [storableJson(tableRows)]);
  }
  if (rows.touched.length === 0) return [];
  const { rows: finished } = await client.query<{ webhook_id: string }>(RECOMPUTE_STATES, [
    rows.touched.map((row) => row.webhook_id),
    rows.touched.map((row) => row.at),
  ]);
  return finished.map((row) => row.webhook_id);
}

/** Upserts minutes' running totals, one row per minute and code (the last one given wins). */
export async function writeIngressCounts(
  client: pg.Pool,
  counts: readonly IngressCount[],
): Promise<void> {
  const byKey = new Map(
    counts.map((row) => {
      const minute = new Date(row.minute).toISOString();
      return [`${minute}\n${row.code}`, { ...row, minute }];
    }),
  );
  const rows = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
  if (rows.length > 0) await client.query(UPSERT_INGRESS_COUNTS, [storableJson(rows)]);
}
