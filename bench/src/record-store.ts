import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '@pw/shared';
import { freePort } from '@pw/test-utils';
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
  let stop = async () => {};
  let base = process.env.DATABASE_URL;
  if (!base) {
    const dataDir = await mkdtemp(join(tmpdir(), 'pw-bench-postgres-'));
    const server = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      persistent: false,
    });
    base = server.url;
    stop = async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const schema = bench.prefix.replace(/-/g, '_');
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const options = encodeURIComponent(`-c search_path=${schema}`);
  return {
    url: `${base}${base.includes('?') ? '&' : '?'}options=${options}`,
    async recordedChanges() {
      const { rows } = await admin.query<{ n: string }>(
        `select count(*) as n from ${schema}.attempts`,
      );
      return Number(rows[0]?.n ?? 0);
    },
    async close() {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
      await stop();
    },
  };
}
