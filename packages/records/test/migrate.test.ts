import { readdirSync } from 'node:fs';
import type pg from 'pg';
import { expect } from 'vitest';
import { INVALID_ARGUMENT } from '@pw/shared/runtime';
import {
  MIGRATION_CHANGED,
  MIGRATIONS_DIRECTORY,
  RecordStore,
  SCHEMA_MISSING,
  migrate,
} from '../src/index.js';
import { poolOn, test } from './store-fixture.js';

/** Every migration this package ships, by version, in order. */
const SHIPPED = readdirSync(MIGRATIONS_DIRECTORY)
  .filter((name) => name.endsWith('.sql'))
  .sort()
  .map((name) => name.slice(0, -'.sql'.length));

const appliedRows = async (db: pg.Pool) =>
  (
    await db.query<{ version: string; checksum: string; applied_at: Date }>(
      'select version, checksum, applied_at from schema_migrations order by version',
    )
  ).rows;

test('applying the migrations again changes nothing', async ({ store, db, schema }) => {
  const before = await appliedRows(db);
  expect(before.map((row) => row.version)).toEqual(SHIPPED);
  expect(await migrate(db)).toEqual([]);
  const again = await RecordStore.open({ databaseUrl: schema.databaseUrl, schema: schema.schema });
  await again.close();
  expect(await appliedRows(db)).toEqual(before);
  await store.ping();
});

test('two processes starting together on a fresh schema both start and migrate once', async ({
  schema,
  db,
}) => {
  const options = { databaseUrl: schema.databaseUrl, schema: schema.schema };
  const stores = await Promise.all([RecordStore.open(options), RecordStore.open(options)]);
  await Promise.all(stores.map((store) => store.close()));
  expect((await appliedRows(db)).map((row) => row.version)).toEqual(SHIPPED);
});

test('of two concurrent migrations on a fresh schema, one applies and the other waits and applies none', async ({
  schema,
}) => {
  const pools = [poolOn(schema), poolOn(schema)];
  try {
    const applied = await Promise.all(pools.map((pool) => migrate(pool)));
    expect(applied.sort((a, b) => a.length - b.length)).toEqual([[], SHIPPED]);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

test('a migration file changed after it was applied stops the start', async ({
  store,
  db,
  schema,
}) => {
  await store.close();
  await db.query(`update schema_migrations set checksum = 'edited' where version = '001_initial'`);
  await expect(
    RecordStore.open({ databaseUrl: schema.databaseUrl, schema: schema.schema }),
  ).rejects.toMatchObject({
    code: MIGRATION_CHANGED,
    message: expect.stringContaining('001_initial') as string,
  });
});

test('a schema that does not exist, or is not a plain name, is refused', async ({ schema }) => {
  await expect(
    RecordStore.open({ databaseUrl: schema.databaseUrl, schema: `${schema.schema}_missing` }),
  ).rejects.toMatchObject({ code: SCHEMA_MISSING });
  await expect(
    RecordStore.open({ databaseUrl: schema.databaseUrl, schema: 'public; drop table x' }),
  ).rejects.toMatchObject({ code: INVALID_ARGUMENT });
});
