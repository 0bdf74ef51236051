// The soak cleans up after itself: its apps run in process groups of their own (so that a fault
// can kill one), which a terminal's Ctrl-C does not reach, so the soak stops them, its Redis and
// its schema, when interrupted and when the system fails to start.
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { testDatabaseUrl } from '@pw/test-utils';
import { startSoak } from './soak-run.js';

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

const found = (output: string, pattern: RegExp) => {
  const match = pattern.exec(output);
  expect(match, output.slice(-3000)).not.toBeNull();
  return match![1]!;
};

let store: pg.Client;
beforeAll(async () => {
  store = new pg.Client({ connectionString: testDatabaseUrl() });
  await store.connect();
});
afterAll(async () => {
  await store.end();
});

const schemaExists = async (schema: string) =>
  (await store.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount === 1;

it('on SIGINT while sending, stops every app, its Redis and its schema, and exits 130', async () => {
  const run = startSoak(['--webhooks', '100000', '--rate', '20', '--faults', 'none']);
  await run.printed('soak: sending');
  const redis = found(run.output, /soak: Redis (\S+)/);
  const schema = found(run.output, /record store schema (\S+)/);
  const urls = [
    ...found(run.output, /up: ingress (.+)/).split(' '),
    found(run.output, /dashboard (http\S+)/),
    redis,
  ];
  expect(urls).toHaveLength(4);
  for (const url of urls) expect(await listening(url), url).toBe(true);
  expect(await schemaExists(schema)).toBe(true);

  expect(await run.stop('SIGINT'), run.output.slice(-2000)).toBe(130);
  expect(run.output).toContain('SIGINT: stopping the system');
  for (const url of urls) expect(await listening(url), url).toBe(false);
  expect(await schemaExists(schema)).toBe(false);
});

it('when an app cannot start, stops what had started and exits 1 saying why', async () => {
  // The ingress refuses a body limit of 0 at start-up; the other apps start.
  const run = startSoak(['--webhooks', '10', '--faults', 'none'], { MAX_BODY_BYTES: '0' });
  expect(await run.exited, run.output.slice(-2000)).toBe(1);
  expect(run.output).toMatch(/ingress .*exited/);
  expect(run.output).toContain('MAX_BODY_BYTES');
  expect(await listening(found(run.output, /soak: Redis (\S+)/))).toBe(false);
  expect(await schemaExists(found(run.output, /record store schema (\S+)/))).toBe(false);
});
