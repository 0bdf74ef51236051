import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type pg from 'pg';
import { PwError } from '@pw/shared/runtime';
import type { FailureCode } from '@pw/shared/runtime';
import { transaction } from './transaction.js';

/** An applied migration file no longer has the contents it was applied with. */
export const MIGRATION_CHANGED = 'migration_changed' satisfies FailureCode;
/** The schema the store was given does not exist (the store does not create it). */
export const SCHEMA_MISSING = 'schema_missing' satisfies FailureCode;

/**
 * The migration files shipped with this package, `NNN_name.sql`. A bundle of this code must carry
 * them along, or pass its own copy's folder to `migrate`.
 */
export const MIGRATIONS_DIRECTORY = new URL('../migrations/', import.meta.url);

/**
 * Brings the pool's schema (its `search_path`) up to date: applies the migration files not applied
 * yet, in name order, in one transaction under an advisory lock, so two processes starting
 * together neither both migrate nor see half a schema; refuses to start when an applied file has
 * changed. Returns the versions it applied. No migration library: a handful of forward-only SQL
 * files, no down migrations, and one table of applied versions is all it needs.
 */
export async function migrate(pool: pg.Pool, directory = MIGRATIONS_DIRECTORY): Promise<string[]> {
  const files = await migrationFiles(directory);
  return transaction(pool, async (client) => {
    const { rows } = await client.query<{ schema: string | null }>(
      'select current_schema() as schema',
    );
    const schema = rows[0]?.schema;
    if (!schema) throw new PwError(SCHEMA_MISSING, 'the record store schema does not exist');
    await client.query('select pg_advisory_xact_lock($1::bigint)', [lockKey(schema)]);
    await client.query(`create table if not exists schema_migrations (version text primary key,
      checksum text not null, applied_at timestamptz not null default now())`);
    const applied = await client.query<{ version: string; checksum: string }>(
      'select version, checksum from schema_migrations',
    );
    const checksums = new Map(applied.rows.map((row) => [row.version, row.checksum]));
    for (const file of files) {
      const checksum = checksums.get(file.version);
      if (checksum !== undefined && checksum !== file.checksum) {
        throw new PwError(
          MIGRATION_CHANGED,
          `migration ${file.version} changed after it was applied`,
        );
      }
    }
    const pending = files.filter((file) => !checksums.has(file.version));
    for (const file of pending) {
      await client.query(file.sql);
      await client.query('insert into schema_migrations (version, checksum) values ($1, $2)', [
        file.version,
        file.checksum,
      ]);
    }
    return pending.map((file) => file.version);
  });
}

interface MigrationFile {
  version: string;
  sql: string;
  checksum: string;
}

async function migrationFiles(directory: URL): Promise<MigrationFile[]> {
  const names = (await readdir(directory))
    .filter((name) => /^\d{3}_[\w-]+\.sql$/.test(name))
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(new URL(name, directory), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      return { version: name.replace(/\.sql$/, ''), sql, checksum };
    }),
  );
}

/** One lock per schema: stores in different schemas of one database migrate independently. */
const lockKey = (schema: string): string =>
  createHash('sha256').update(`pw-records-migrate:${schema}`).digest().readBigInt64BE(0).toString();
