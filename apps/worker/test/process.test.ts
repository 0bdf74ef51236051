import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutcomeStore } from '@pw/shared/outcomes';
import { startSandbox } from '@pw/sandbox';
import {
  ChildRun,
  deleteKeys,
  freePort,
  startIntake,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';
import type { TestIntake } from '@pw/test-utils';
import { webhookJob } from './fixtures.js';
import type { Sandbox } from './harness.js';

const CLIENT_SECRET = 'client-secret-that-must-never-be-logged';
const prefix = uniquePrefix();
let sandbox: Sandbox;
let redis: Redis;
let subscriber: Redis;
let intake: TestIntake;
const runs: ChildRun[] = [];
/** The retry policy of the deployment: the ingress gives it to each action job it adds. */
const RETRY = { attempts: 8, backoff: { type: 'fixed', delay_ms: 50 } } as const;
let healthPort = 0;

const workerEnv = async () => ({
  ...sandbox.env,
  REDIS_URL: testRedisUrl(),
  QUEUE_PREFIX: prefix,
  WORKER_HEALTH_PORT: String((healthPort = await freePort())),
  WORKER_LOCK_MS: '3000',
  LOG_LEVEL: 'debug',
});

async function startWorker(extra: Record<string, string> = {}): Promise<ChildRun> {
  const run = ChildRun.tsx('apps/worker/src/main.ts', { ...(await workerEnv()), ...extra });
  runs.push(run);
  await run.printed('worker running');
  return run;
}

beforeAll(async () => {
  sandbox = await startSandbox({ clientSecret: CLIENT_SECRET });
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  subscriber = redis.duplicate();
  intake = startIntake(redis, prefix, { retry: RETRY });
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  await intake.close();
  await deleteKeys(redis, prefix);
  subscriber.disconnect();
  redis.disconnect();
  await sandbox.stop();
});

describe('worker processes', { timeout: 60_000 }, () => {
  it('a worker killed with SIGKILL with 200 actions in flight: all complete in a second worker', async () => {
    const jobs = Array.from({ length: 200 }, () => webhookJob('contract', 'signed'));
    const first = await startWorker({ WORKER_CONCURRENCY: '200' });
    // A target that has not answered yet is kept to CIRCUIT_FAILURE_THRESHOLD calls in flight
    // (it may be down); one answered call lifts that, as on any running system.
    const warmUp = webhookJob('contract', 'signed');
    await intake.add(warmUp);
    const outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 60 });
    await outcomes.waitUntilFinished(warmUp.webhook_id, subscriber, { timeoutMs: 20_000 });
    const hold = sandbox.api.hold(/^\/contracts\/.+\/documents$/);
    for (const job of jobs) await intake.add(job);
    await hold.held(jobs.length);
    expect(await first.stop('SIGKILL')).toBe(null);
    hold.release();

    await startWorker();
    for (const job of jobs) {
      const outcome = await outcomes.waitUntilFinished(job.webhook_id, subscriber, {
        timeoutMs: 20_000,
      });
      expect(outcome.state).toBe('completed');
    }
    // At least once: the killed worker's call may have reached the API; never more than twice.
    for (const job of jobs) {
      const calls = sandbox.api.calls.filter(
        (c) => c.headers['idempotency-key'] === `${job.webhook_id}:generate_documents`,
      );
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls.length).toBeLessThanOrEqual(2);
    }
  });

  it('serves /healthz, /readyz once it takes jobs, and /metrics counting the completed actions', async () => {
    expect((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    expect(metrics).toMatch(/actions_total\{action="generate_documents",outcome="completed"\} \d+/);
    expect(metrics).toContain('token_requests_total{outcome="success"} 1');
    expect(metrics).toContain('action_duration_seconds_bucket');
  });

  it('SIGTERM under load: active jobs finish, the others stay queued for the next worker, exit 0', async () => {
    const run = runs.at(-1)!;
    const jobs = Array.from({ length: 30 }, () => webhookJob('sales', 'lost'));
    const hold = sandbox.api.hold(/^\/crm\/opportunities\//);
    for (const job of jobs) await intake.add(job);
    await hold.held(10);
    const exited = run.stop('SIGTERM');
    await run.printed('stopping: letting active jobs finish');
    hold.release();
    expect(await exited).toBe(0);
    expect(run.output).toContain('stopped');

    await startWorker();
    const outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 60 });
    for (const job of jobs) {
      const outcome = await outcomes.waitUntilFinished(job.webhook_id, subscriber, {
        timeoutMs: 40_000,
      });
      expect(outcome.state).toBe('completed');
      expect(outcome.actions[0]!.attempts).toBe(1);
    }
    const last = runs.at(-1)!;
    expect(await last.stop('SIGTERM')).toBe(0);
  });

  it('no log line of a whole run holds the client secret or an access token', () => {
    const logs = runs.map((run) => run.output).join('\n');
    expect(logs).toContain('token request');
    expect(logs).not.toContain(CLIENT_SECRET);
    const tokens = new Set(
      sandbox.api.calls.map((call) => call.headers.authorization?.replace('Bearer ', '')),
    );
    expect(tokens.size).toBeGreaterThan(0);
    for (const token of tokens) expect(logs).not.toContain(token);
  });
});

describe('worker start-up', () => {
  it('refuses to start without the identity provider settings, naming each', async () => {
    const run = ChildRun.tsx('apps/worker/src/main.ts', {
      REDIS_URL: testRedisUrl(),
      AUTH_URL: '',
      AUTH_REALM: '',
      AUTH_CLIENT_ID: '',
      AUTH_CLIENT_SECRET: '',
      API_BASE_URL: '',
      WORKER_CONCURRENCY: 'many',
    });
    expect(await run.exited).toBe(1);
    for (const name of [
      'AUTH_URL',
      'AUTH_REALM',
      'AUTH_CLIENT_ID',
      'AUTH_CLIENT_SECRET',
      'API_BASE_URL',
      'WORKER_CONCURRENCY',
    ]) {
      expect(run.output).toContain(name);
    }
  });
});
