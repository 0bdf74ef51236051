import type pg from 'pg';
import { invalidArgument } from '@pw/shared/runtime';
import type { PurgeOptions, PurgeResult } from './record-types.js';

const DAY_MS = 86_400_000;

// Each statement deletes at most $2 rows, found through the index on the time it ages by, so no
// delete holds its locks long or bloats one transaction; a webhook's actions and attempts go with
// it (on delete cascade).
const DELETES: Record<keyof PurgeResult, string> = {
  webhooks: `delete from webhooks where webhook_id in
    (select webhook_id from webhooks where received_at < $1::timestamptz limit $2)`,
  audit_entries: `delete from audit_entries where seq in
    (select seq from audit_entries where at < $1::timestamptz limit $2)`,
  ingress_counts: `delete from ingress_counts where (minute, code) in
    (select minute, code from ingress_counts where minute < $1::timestamptz limit $2)`,
};

/** Deletes what is older than the retention, batch by batch, until nothing old is left. */
export async function purge(pool: pg.Pool, options: PurgeOptions): Promise<PurgeResult> {
  const batchSize = options.batchSize ?? 1000;
  if (!(options.retentionDays > 0) || !Number.isInteger(batchSize) || batchSize < 1) {
    throw invalidArgument('purge needs retentionDays > 0 and a whole batchSize >= 1');
  }
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - options.retentionDays * DAY_MS).toISOString();
  const removed: PurgeResult = { webhooks: 0, audit_entries: 0, ingress_counts: 0 };
  for (const table of Object.keys(DELETES) as (keyof PurgeResult)[]) {
    for (;;) {
      const { rowCount } = await pool.query(DELETES[table], [cutoff, batchSize]);
      removed[table] += rowCount ?? 0;
      if ((rowCount ?? 0) < batchSize) break;
    }
  }
  return removed;
}
