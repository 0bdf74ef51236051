import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutcomeStore } from '@pw/shared/outcomes';
import { QUEUE_NAMES } from '@pw/shared/queue';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { startSandbox } from '@pw/sandbox';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  startIntake,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';
import { webhookJob } from './fixtures.js';

// Two real worker processes share one circuit through Redis; one is killed while it is open.

const THRESHOLD = 3;
const PROBE_MS = 1000;
const OUTAGE_MS = 15_000;
/** The deployment's retry policy: the ingress gives it to each action job it adds. */
const RETRY = { attempts: 2, backoff: { type: 'fixed', delay_ms: 50 } } as const;

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let redis: ReturnType<typeof newTestRedis>;
let subscriber: ReturnType<typeof newTestRedis>;
const prefix = uniquePrefix();
const runs: ChildRun[] = [];

async function startWorker(): Promise<{ run: ChildRun; metricsUrl: string }> {
  const port = await freePort();
  const run = ChildRun.tsx('apps/worker/src/main.ts', {
    ...sandbox.env,
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    WORKER_HEALTH_PORT: String(port),
    WORKER_LOCK_MS: '3000',
    CIRCUIT_FAILURE_THRESHOLD: String(THRESHOLD),
    CIRCUIT_PROBE_INTERVAL_MS: String(PROBE_MS),
  });
  runs.push(run);
  await run.printed('worker running');
  return { run, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}

/** `actions_held_total` of one worker process, summed over actions. */
async function heldBy(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return [...text.matchAll(/^actions_held_total\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

beforeAll(async () => {
  sandbox = await startSandbox({});
  redis = newTestRedis();
  subscriber = newTestRedis();
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  await deleteKeys(redis, prefix);
  redis.disconnect();
  subscriber.disconnect();
  await sandbox.stop();
});

describe('one circuit shared by two worker processes', { timeout: 90_000 }, () => {
  it('both hold their actions while it is open; a worker SIGKILLed meanwhile loses nothing', async () => {
    const [first, second] = await Promise.all([startWorker(), startWorker()]);
    const until = sandbox.api.failNext({ path: /.*/, status: 503, forMs: OUTAGE_MS });
    const intake = startIntake(redis, prefix, { retry: RETRY });
    const jobs = Array.from({ length: 40 }, () => webhookJob('contract', 'signed'));
    for (const job of jobs) await intake.add(job);
    await intake.close();

    const circuits = new CircuitBreaker(redis, {
      queuePrefix: prefix,
      failureThreshold: THRESHOLD,
      probeIntervalMs: PROBE_MS,
      leaseMs: 30_000,
    });
    await expect
      .poll(async () => (await circuits.list())[0]?.state, { timeout: 20_000 })
      .toBe('open');
    // Each process holds actions of its own: neither made its own threshold of calls.
    await expect.poll(() => heldBy(first.metricsUrl), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => heldBy(second.metricsUrl), { timeout: 20_000 }).toBeGreaterThan(0);
    const metrics = await (await fetch(first.metricsUrl)).text();
    expect(metrics).toMatch(/^partner_circuit_open\{target="[^"]+"\} 1$/m);

    expect(await first.run.stop('SIGKILL')).toBe(null);
    const outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 60 });
    for (const job of jobs) {
      const outcome = await outcomes.waitUntilFinished(job.webhook_id, subscriber, {
        timeoutMs: OUTAGE_MS + 30_000,
      });
      expect(outcome.state).toBe('completed');
    }
    const actions = new Queue(QUEUE_NAMES.actions, { connection: redis, prefix });
    expect(await actions.getFailedCount()).toBe(0);
    await actions.close();
    const duringOutage = sandbox.api.calls.filter((call) => call.at.getTime() < until);
    expect(duringOutage.length).toBeLessThanOrEqual(
      THRESHOLD + Math.ceil(OUTAGE_MS / PROBE_MS) + 1,
    );
    // The transitions were logged by whichever process made them, once each way.
    const logs = runs.map((run) => run.output).join('\n');
    expect(logs.match(/circuit opened/g)).toHaveLength(1);
    expect(logs.match(/circuit closed/g)).toHaveLength(1);
  });
});
