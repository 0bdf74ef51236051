import pg from 'pg';
import { test as base } from 'vitest';
import { testSchema } from '@pw/test-utils';
import type { TestSchema } from '@pw/test-utils';
import { RecordStore } from '../src/index.js';

export interface StoreFixtures {
  /** A fresh schema of the test's own, dropped after it. */
  schema: TestSchema;
  /** A store opened (migrated) on it. */
  store: RecordStore;
  /** A pool on the same schema, to look at the tables directly. */
  db: pg.Pool;
}

/** `test` with a record store of its own. */
export const test = base.extend<StoreFixtures>({
  // eslint-disable-next-line no-empty-pattern
  schema: async ({}, use) => {
    const schema = await testSchema();
    await use(schema);
    await schema.drop();
  },
  store: async ({ schema }, use) => {
    const store = await RecordStore.open({
      databaseUrl: schema.databaseUrl,
      schema: schema.schema,
    });
    await use(store);
    await store.close();
  },
  db: async ({ schema }, use) => {
    const pool = poolOn(schema);
    await use(pool);
    await pool.end();
  },
});

export const poolOn = (schema: TestSchema): pg.Pool =>
  new pg.Pool({
    connectionString: schema.databaseUrl,
    options: `-c search_path=${schema.schema}`,
  });

/** Every row of every table of the store, in key order, with each row version's `xmin`. */
export async function tableContents(db: pg.Pool): Promise<Record<string, unknown[]>> {
  const tables = {
    webhooks: 'webhook_id',
    actions: 'webhook_id, name',
    attempts: 'webhook_id, action, seq',
    audit_entries: 'seq',
    ingress_counts: 'minute, code',
  };
  const contents: Record<string, unknown[]> = {};
  for (const [table, key] of Object.entries(tables)) {
    contents[table] = (await db.query(`select xmin::text, * from ${table} order by ${key}`)).rows;
  }
  return contents;
}
