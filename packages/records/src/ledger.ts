import type pg from 'pg';
import { PwError } from '@pw/shared/runtime';
import { INVALID_TIME, parseTime } from './query-input.js';
import type { Ledger } from './record-types.js';

const MINUTE_MS = 60_000;

const INGRESS_TOTALS = `select code, sum(count)::text as count from ingress_counts
  where minute >= $1::timestamptz and minute < $2::timestamptz group by code`;

const WEBHOOK_STATES = `select
    count(*) filter (where state = 'completed')::int as completed,
    count(*) filter (where state = 'failed')::int as failed,
    count(*) filter (where state in ('queued', 'processing'))::int as in_flight,
    count(*) filter (where state = 'quarantined')::int as quarantined,
    count(*) filter (where state = 'discarded')::int as discarded
  from webhooks where received_at >= $1::timestamptz and received_at < $2::timestamptz`;

/**
 * Where the webhooks accepted in [from, to) stand. The ingress counts by the minute, so the
 * interval is widened to whole minutes (from down, to up) for both sides to cover the same time.
 */
export async function readLedger(pool: pg.Pool, from: string, to: string): Promise<Ledger> {
  const start = new Date(Math.floor(parseTime(from, 'from').getTime() / MINUTE_MS) * MINUTE_MS);
  const end = new Date(Math.ceil(parseTime(to, 'to').getTime() / MINUTE_MS) * MINUTE_MS);
  if (end < start) throw new PwError(INVALID_TIME, 'to is before from');
  const interval = [start.toISOString(), end.toISOString()];
  const [totals, states] = await Promise.all([
    pool.query<{ code: string; count: string }>(INGRESS_TOTALS, interval),
    pool.query<{
      completed: number;
      failed: number;
      in_flight: number;
      quarantined: number;
      discarded: number;
    }>(WEBHOOK_STATES, interval),
  ]);
  const counts = Object.fromEntries(totals.rows.map((row) => [row.code, Number(row.count)]));
  const { accepted = 0, duplicate = 0, ...refusals } = counts;
  const {
    completed = 0,
    failed = 0,
    in_flight = 0,
    quarantined = 0,
    discarded = 0,
  } = states.rows[0] ?? {};
  return {
    from: start.toISOString(),
    to: end.toISOString(),
    accepted,
    duplicates: duplicate,
    refusals,
    completed,
    failed,
    in_flight,
    quarantined,
    discarded,
    balanced: accepted === completed + failed + in_flight + quarantined + discarded,
  };
}
