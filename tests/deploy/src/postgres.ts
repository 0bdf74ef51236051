import type { TestSchema } from '@pw/test-utils';

/**
 * The test schema's database as one connection string, for an app started as a child process (it
 * takes nothing but DATABASE_URL): the schema becomes the connection's `search_path`, through the
 * `options` parameter libpq and node-postgres pass to the server at connect time.
 */
export function schemaDatabaseUrl({ databaseUrl, schema }: TestSchema): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
