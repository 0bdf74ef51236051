import { privateDatabase } from '@pw/test-utils';
import type { BenchRun } from './bench-run.js';

export interface BenchDatabase {
  /** The recorder's connection string: a schema of the run's own. */
  url: string;
  /** Changes written so far (attempt rows, the busiest table). */
  recordedChanges(): Promise<number>;
  /** Drops the schema, stops an embedded server. */
  close(): Promise<void>;
}

/**
 * A record store for the bench: a schema of its own in `DATABASE_URL`'s PostgreSQL when set (as
 * CI sets it), else an embedded PostgreSQL in a temporary folder.
 */
export async function benchDatabase(bench: BenchRun): Promise<BenchDatabase> {
  const database = await privateDatabase(bench.prefix.replace(/-/g, '_'));
  return {
    url: database.url,
    async recordedChanges() {
      const { rows } = await database.admin.query<{ n: string }>(
        `select count(*) as n from ${database.schema}.attempts`,
      );
      return Number(rows[0]?.n ?? 0);
    },
    close: () => database.close(),
  };
}
