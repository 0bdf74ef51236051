import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './redis-server.js';
import { startTestPostgres } from './reaped-postgres.js';

export interface PrivateDatabase {
  /** The connection string of the schema: `search_path` set to it. */
  url: string;
  /** The schema's name. */
  schema: string;
  /** A connection to the server, for queries about the schema. */
  admin: pg.Client;
  /** Drops the schema, stops an embedded server. */
  close(): Promise<void>;
}

/**
 * A PostgreSQL schema named `schema` of a run's own (the bench's, the soak's): in `DATABASE_URL`'s
 * server when set (as CI sets it), else in an embedded PostgreSQL in a temporary folder.
 */
export async function privateDatabase(schema: string): Promise<PrivateDatabase> {
  let stopServer = async () => {};
  let base = process.env.DATABASE_URL;
  if (!base) {
    const dataDir = await mkdtemp(join(tmpdir(), 'pw-postgres-'));
    const server = await startTestPostgres({
      dataDir,
      port: await freePort(),
      persistent: false,
    });
    base = server.url;
    stopServer = async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const options = encodeURIComponent(`-c search_path=${schema}`);
  return {
    url: `${base}${base.includes('?') ? '&' : '?'}options=${options}`,
    schema,
    admin,
    async close() {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
      await stopServer();
    },
  };
}
