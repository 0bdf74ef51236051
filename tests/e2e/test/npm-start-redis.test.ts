// `npm start` on a machine with no Redis: REDIS_URL unset and nothing answering on the apps'
// default address. This machine's own Redis holds 127.0.0.1:6379, so TEST_DEFAULT_REDIS_PORT
// (for tests only) puts the default address on a free port; all else is as a newcomer runs it.
// Which way npm start takes on other machines (apt-get, a container) is planLocalRedis's test.
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ChildRun, freePort, redisAnswers, testSchema, uniquePrefix } from '@pw/test-utils';
import type { TestSchema } from '@pw/test-utils';
import { systemEnv } from './system.js';

/** Process ids of the redis-servers listening on `port` (Redis titles itself `redis-server host:port`). */
function redisServerPids(port: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return command.startsWith('redis-server') && command.includes(`:${port}`);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** npm start's last line when it has stopped what it started. */
const STOPPED = /start\s+info\s+stopped\s*$/m;

let folder: string;
let schema: TestSchema | undefined;
let port: number;
let run: ChildRun;
let env: Record<string, string>;
let webhookId: string | undefined;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'pw-npm-start-redis-'));
  schema = await testSchema();
  port = await freePort();
  // Nothing answers on the port npm start looks at first: it starts its own Redis there.
  env = await systemEnv(uniquePrefix(), schema, {
    REDIS_URL: '',
    TEST_DEFAULT_REDIS_PORT: String(port),
    PRIVATE_REDIS_DIR: join(folder, 'redis'),
  });
  expect(await redisAnswers('127.0.0.1', port)).toBe(false);
  run = ChildRun.tsx('scripts/start.ts', env);
  const ready = ['ingress listening', 'worker running', 'recorder running', 'dashboard listening'];
  await Promise.all(ready.map((text) => run.printed(text)));
}, 120_000);
afterAll(async () => {
  // Unset when the start itself failed.
  if (run as ChildRun | undefined) await run.stop('SIGKILL');
  // Its own process group: a test that failed before Ctrl-C leaves it to be stopped here.
  for (const pid of redisServerPids(port)) process.kill(pid, 'SIGKILL');
  await schema?.drop();
  await rm(folder, { recursive: true, force: true });
});

describe('npm start with REDIS_URL unset and no Redis on the default address', () => {
  it('says it starts a private Redis there, with its append-only file in the data folder', () => {
    expect(run.output).toContain(
      `REDIS_URL is unset and nothing answers on 127.0.0.1:${port}: starting a private Redis there ` +
        `(redis-server, append-only file in ${join(folder, 'redis')}), stopped when npm start stops`,
    );
    expect(redisServerPids(port)).toHaveLength(1);
  });

  it('a webhook sent with `npm run send -- quote --wait` is accepted and its actions completed, through that Redis', async () => {
    const send = ChildRun.start(['npm', 'run', '-s', 'send', '--', 'quote', '--wait'], {
      ...env,
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(await send.exited).toBe(0);
    const [ack, outcome] = send.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { webhook_id: string; state?: string });
    expect(outcome?.webhook_id).toBe(ack?.webhook_id);
    expect(outcome?.state).toBe('completed');
    webhookId = ack?.webhook_id;
  });

  it('Ctrl-C stops it with the rest; the webhook is in its append-only file', async () => {
    const pids = redisServerPids(port);
    expect(await run.stop('SIGINT')).toBe(0);
    expect(run.output).toMatch(STOPPED);
    expect(await redisAnswers('127.0.0.1', port)).toBe(false);
    expect(pids.filter((pid) => readdirSync('/proc').includes(String(pid)))).toEqual([]);
    const aofs = join(folder, 'redis', 'appendonlydir');
    const appended = readdirSync(aofs)
      .filter((name) => name.endsWith('.incr.aof'))
      .map((name) => readFileSync(join(aofs, name), 'latin1'))
      .join('');
    expect(webhookId).toBeDefined();
    expect(appended).toContain(webhookId);
  });
});

describe('npm start with no Redis and no way to start one', () => {
  it('stops at once with one line saying what to install, and exit code 1', async () => {
    // A PATH of nothing: no redis-server, no apt-get, no docker (node is run by its full path).
    const ownPort = await freePort();
    const bare = ChildRun.tsx('scripts/start.ts', {
      ...env,
      TEST_DEFAULT_REDIS_PORT: String(ownPort),
      PATH: join(folder, 'empty'),
      PRIVATE_REDIS_DIR: join(folder, 'unused'),
    });
    // Also when it does not stop: a test that times out never reaches a `finally`.
    onTestFinished(() => bare.stop('SIGKILL').then(() => undefined));
    expect(await bare.exited).toBe(1);
    expect(bare.output.trim().split('\n')).toEqual([
      expect.stringContaining(
        `could not start: REDIS_URL is unset and nothing answers on 127.0.0.1:${ownPort}, and there is ` +
          'no redis-server on the PATH, no apt-get as root and no Docker engine: install redis-server',
      ),
    ]);
  });
});

describe('npm start that fails after starting its private Redis', () => {
  it('stops that Redis too, and exits 1 saying why', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    onTestFinished(() => void taken.close());
    const { port: takenPort } = taken.address() as { port: number };
    const ownPort = await freePort();
    const failing = ChildRun.tsx('scripts/start.ts', {
      ...env,
      TEST_DEFAULT_REDIS_PORT: String(ownPort),
      SANDBOX_IDP_PORT: String(takenPort),
      PRIVATE_REDIS_DIR: join(folder, 'failing'),
    });
    onTestFinished(async () => {
      await failing.stop('SIGKILL');
      for (const pid of redisServerPids(ownPort)) process.kill(pid, 'SIGKILL');
    });
    expect(await failing.exited).toBe(1);
    expect(failing.output).toContain('starting a private Redis there');
    expect(failing.output).toMatch(/could not start: .*EADDRINUSE/);
    expect(failing.output).toMatch(STOPPED);
    expect(redisServerPids(ownPort)).toEqual([]);
    expect(await redisAnswers('127.0.0.1', ownPort)).toBe(false);
  });
});
