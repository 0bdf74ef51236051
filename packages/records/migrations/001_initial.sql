-- The record store (contract section 12): every webhook's record, its actions' attempt history, the
-- audit log and the ingress's per-minute counts, kept RECORD_RETENTION_DAYS.
--
-- Times are timestamptz(3): kept to the millisecond, as JavaScript writes them, so a time read
-- back equals the time written (the search cursor carries one and compares it).
-- `seq` is the record stream's order of changes (record-changes.ts): a row keeps the seq of the
-- change it came from, so an older change written late never overwrites a newer one.
-- States and outcomes are not constrained here: a value added later in the code must not make the
-- recorder's batches fail forever.

create table webhooks (
  webhook_id text primary key,
  event_type text not null,
  entity_id text not null,
  customer_id text,
  received_at timestamptz(3) not null,
  finished_at timestamptz(3),
  state text not null,
  stale boolean not null default false,
  -- The webhook's actions in their order: an outcome record lists them in it.
  actions text[] not null,
  -- The event as received; null until the `webhook` change has been written.
  event jsonb,
  trace_id text,
  seq bigint not null
);

-- Search (newest first, webhook_id breaking ties for the keyset cursor), one index per filter.
create index webhooks_by_entity on webhooks (entity_id, received_at desc, webhook_id desc);
create index webhooks_by_customer on webhooks (customer_id, received_at desc, webhook_id desc);
create index webhooks_by_event_type on webhooks (event_type, received_at desc, webhook_id desc);
create index webhooks_by_state on webhooks (state, received_at desc, webhook_id desc);
-- No filter, a time range, the ledger's counts, and retention (deletes by received_at).
create index webhooks_by_received_at on webhooks (received_at desc, webhook_id desc);

create table actions (
  webhook_id text not null references webhooks on delete cascade,
  name text not null,
  state text not null,
  attempts integer not null,
  last_error text check (char_length(last_error) <= 500),
  completed_at timestamptz(3),
  skipped text,
  held text,
  seq bigint not null,
  primary key (webhook_id, name)
);

-- One row per attempt; the primary key also serves an action's history (newest seq first) and
-- the cascade from webhooks.
create table attempts (
  webhook_id text not null references webhooks on delete cascade,
  action text not null,
  seq bigint not null,
  attempt integer not null,
  started_at timestamptz(3) not null,
  finished_at timestamptz(3) not null,
  outcome text not null,
  status integer,
  error text check (char_length(error) <= 500),
  duration_ms integer not null,
  primary key (webhook_id, action, seq)
);

create table audit_entries (
  seq bigint primary key,
  at timestamptz(3) not null,
  "user" text not null,
  action text not null,
  target text not null,
  details jsonb not null
);

-- Newest first with a keyset tiebreak; also retention (deletes by at).
create index audit_entries_by_at on audit_entries (at desc, seq desc);

-- The ingress's running total per minute and code (`accepted`, `duplicate`, refusal codes); the
-- primary key serves the ledger's range and retention (deletes by minute).
create table ingress_counts (
  minute timestamptz(3) not null,
  code text not null,
  count bigint not null,
  primary key (minute, code)
);
