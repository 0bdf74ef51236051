import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** The PostgreSQL the global setup chose for this run. */
export const testDatabaseUrl = (): string => inject('databaseUrl');

export interface TestSchema {
  databaseUrl: string;
  /** A schema of the test's own, created empty. */
  schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** A fresh schema for one test, in the run's PostgreSQL; `drop()` it afterwards. */
export async function testSchema(): Promise<TestSchema> {
  const databaseUrl = testDatabaseUrl();
  const schema = `pwtest_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
  } finally {
    await client.end();
  }
  return {
    databaseUrl,
    schema,
    async drop() {
      const dropper = new pg.Client({ connectionString: databaseUrl });
      await dropper.connect();
      try {
        await dropper.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await dropper.end();
      }
    },
  };
}
