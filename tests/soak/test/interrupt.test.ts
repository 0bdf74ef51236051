// Ctrl-C on `npm run soak`: the apps run in process groups of their own (so that a fault can kill
// one), which the terminal's signal does not reach; the soak stops them, its Redis and its schema.
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import pg from 'pg';
import { ChildRun, testDatabaseUrl } from '@pw/test-utils';

/** Whether something accepts connections at `url`'s host and port. */
const listening = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const addresses = (output: string) => {
  const up = /up: ingress (.+), Redis (\S+)/.exec(output)!;
  const dashboard = /dashboard (http\S+)/.exec(output)!;
  return [...up[1]!.split(' '), up[2]!, dashboard[1]!];
};

it('on SIGINT while sending, stops every app, its Redis and its schema, and exits 130', async () => {
  const soak = ChildRun.start(
    [
      process.execPath,
      '--import',
      'tsx',
      'tests/soak/src/main.ts',
      ...['--webhooks', '100000', '--rate', '20', '--faults', 'none'],
    ],
    { DATABASE_URL: testDatabaseUrl() },
    { name: 'soak', killAfterMs: 60_000 },
  );
  await soak.printed('soak: sending');
  const urls = addresses(soak.output);
  const schema = /record store schema (\S+)/.exec(soak.output)![1]!;
  expect(urls).toHaveLength(4);
  for (const url of urls) expect(await listening(url), url).toBe(true);

  expect(await soak.stop('SIGINT'), soak.output.slice(-2000)).toBe(130);
  expect(soak.output).toContain('SIGINT: stopping the system');
  for (const url of urls) expect(await listening(url), url).toBe(false);
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
    expect(found.rowCount).toBe(0);
  } finally {
    await client.end();
  }
});
