import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { EventKind } from '@pw/shared/events';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { actionJobId, QUEUE_NAMES } from '@pw/shared/queue';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { startSandbox } from '@pw/sandbox';
import { newTestRedis, testRedisUrl } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import type { PartnerTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// An outage of a partner target, of any length, ends in completed actions, not dead letters, and
// the target sees at most the threshold plus one probe per interval
// (docs/reliability-and-security.md#outages-the-circuit-breaker).

/** How long each dependency stays away: a minute by the clock, not a wait for an event. */
const OUTAGE_MS = 60_000;
const THRESHOLD = 10;
const PROBE_MS = 2000;
/** Few attempts, short backoff: without the circuit every action would be dead within a second. */
const POLICY = {
  attempts: 3,
  backoff: { type: 'fixed', delay_ms: 100 },
  circuit: { failureThreshold: THRESHOLD, probeIntervalMs: PROBE_MS },
} as const;
/** The most calls an open circuit lets through in `ms`: one probe per interval at most. */
const probesIn = (ms: number, intervalMs = PROBE_MS) => Math.ceil(ms / intervalMs) + 1;

const KINDS: [EventKind, string][] = [
  ['quote', 'approved'],
  ['contract', 'active'],
  ['sales', 'converted'],
];
const events = (count: number) =>
  Array.from({ length: count }, (_, i) => webhookJob(...KINDS[i % KINDS.length]!));

async function jobLogs(harness: WorkerHarness, jobId: string): Promise<string[]> {
  const actions = new Queue(QUEUE_NAMES.actions, {
    connection: { url: testRedisUrl() },
    prefix: harness.prefix,
  });
  try {
    return (await actions.getJobLogs(jobId)).logs;
  } finally {
    await actions.close();
  }
}

async function deadLetters(harness: WorkerHarness): Promise<number> {
  const actions = new Queue(QUEUE_NAMES.actions, {
    connection: { url: testRedisUrl() },
    prefix: harness.prefix,
  });
  try {
    return await actions.getFailedCount();
  } finally {
    await actions.close();
  }
}

const isHeld = (outcome: WebhookOutcome) =>
  outcome.actions.some((action) => action.state === 'waiting' && action.held === 'circuit_open');

/** When the last action of these webhooks completed (epoch ms); every one must have. */
async function allCompleted(harness: WorkerHarness, jobs: AcceptedWebhook[], timeoutMs: number) {
  let last = 0;
  for (const job of jobs) {
    const outcome = await harness.finished(job.webhook_id, timeoutMs);
    expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
    for (const action of outcome.actions) last = Math.max(last, Date.parse(action.completed_at!));
  }
  expect(await deadLetters(harness)).toBe(0);
  return last;
}

/** The circuits as the worker of `harness` keeps them. */
const circuitsOf = (redis: Redis, harness: WorkerHarness) =>
  new CircuitBreaker(redis, {
    queuePrefix: harness.prefix,
    failureThreshold: THRESHOLD,
    probeIntervalMs: PROBE_MS,
    leaseMs: 30_000,
  });

// The outages run side by side, each with its own worker, sandbox and queue prefix: both describes
// are concurrent, so vitest runs all four tests at once.
describe.concurrent('a partner target away for 60 seconds', { timeout: 150_000 }, () => {
  it('the partner API answers 503: actions are held, not dead; the partner sees the threshold and the probes', async () => {
    const harness = await startWorkerHarness(POLICY);
    try {
      const until = harness.sandbox.api.failNext({ path: /.*/, status: 503, forMs: OUTAGE_MS });
      const jobs = events(50);
      for (const job of jobs) await harness.enqueue(job);
      const held = await harness.until(jobs[0]!.webhook_id, isHeld);
      expect(held.state).not.toBe('failed');
      // On the board, a held job is a delayed job whose log says why.
      const heldAction = held.actions.find((action) => action.held === 'circuit_open')!;
      const logs = await jobLogs(harness, actionJobId(held.webhook_id, heldAction.name));
      expect(logs.join('\n')).toMatch(/^held: the circuit of .+ is open; no attempt is spent/m);

      const last = await allCompleted(harness, jobs, OUTAGE_MS + 60_000);
      // Within a few probe intervals of the recovery (one probe, then the held jobs at once).
      expect(last - until).toBeLessThan(5 * PROBE_MS);
      const duringOutage = harness.sandbox.api.calls.filter((call) => call.status === 503);
      expect(duringOutage.length).toBeGreaterThanOrEqual(THRESHOLD);
      expect(duringOutage.length).toBeLessThanOrEqual(THRESHOLD + probesIn(OUTAGE_MS));
      // The records count every call made, and not the held actions' looks at the circuit.
      let attempts = 0;
      for (const job of jobs) {
        const outcome = await harness.finished(job.webhook_id);
        for (const action of outcome.actions) attempts += action.attempts;
      }
      expect(attempts).toBe(harness.sandbox.api.calls.length);
    } finally {
      await harness.close();
    }
  });

  it('the identity provider is unreachable: actions are held, not dead; no call reaches the API meanwhile', async () => {
    const harness = await startWorkerHarness(POLICY);
    try {
      await harness.sandbox.idp.pause();
      const back = sleep(OUTAGE_MS).then(() => harness.sandbox.idp.resume());
      const jobs = events(30);
      for (const job of jobs) await harness.enqueue(job);
      await harness.until(jobs[0]!.webhook_id, isHeld);
      await back;
      const outageEnd = Date.now();
      await allCompleted(harness, jobs, 60_000);
      expect(harness.sandbox.api.calls.filter((call) => call.at.getTime() < outageEnd)).toEqual([]);
      // Each try of a token asks the provider up to 3 times: the threshold and the probes.
      const failed = await harness.metrics.tokenRequests.get();
      const failures = failed.values.find((value) => value.labels.outcome === 'failure')?.value;
      expect(failures).toBeLessThanOrEqual(3 * (THRESHOLD + probesIn(OUTAGE_MS)));
    } finally {
      await harness.close();
    }
  });
});

describe.concurrent('one circuit per target, opened by outages only', { timeout: 150_000 }, () => {
  it('a target that is down does not hold up a healthy one (two markets, one down)', async () => {
    const asia = await startSandbox({ realm: 'asia', clientId: 'pw-asia', clientSecret: 's' });
    const asiaTarget: PartnerTarget = {
      baseUrl: asia.env.API_BASE_URL,
      credentials: {
        authUrl: asia.env.AUTH_URL,
        realm: 'asia',
        clientId: 'pw-asia',
        clientSecret: 's',
      },
    };
    const harness = await startWorkerHarness({ ...POLICY, byMarket: { asia: asiaTarget } });
    const redis = newTestRedis();
    const circuits = circuitsOf(redis, harness);
    try {
      asia.api.failNext({ path: /.*/, status: 503, forMs: OUTAGE_MS });
      const asian = events(20).map((job) => {
        job.event.metadata = { market: 'asia' };
        return job;
      });
      for (const job of asian) await harness.enqueue(job);
      await harness.until(asian[0]!.webhook_id, isHeld);

      const healthy = events(20);
      for (const job of healthy) await harness.enqueue(job);
      await allCompleted(harness, healthy, 30_000);
      // All done while the other target was still down and its actions held.
      expect(await circuits.view(circuitTarget(asiaTarget))).toMatchObject({ state: 'open' });
      expect((await circuits.view(circuitTarget(asiaTarget))).held_actions).toBeGreaterThan(0);
      expect(await circuits.view(circuitTarget(harness.target))).toMatchObject({
        state: 'closed',
        consecutive_failures: 0,
      });
      expect(harness.sandbox.api.calls.every((call) => call.status === 200)).toBe(true);
    } finally {
      redis.disconnect();
      await harness.close();
      await asia.stop();
    }
  });

  it('a permanent failure (4xx) never opens the circuit', async () => {
    const harness = await startWorkerHarness({ ...POLICY, attempts: 1 });
    const redis = newTestRedis();
    try {
      harness.sandbox.api.failNext({ path: /.*/, status: 400, forMs: OUTAGE_MS });
      const jobs = Array.from({ length: 3 * THRESHOLD }, () => webhookJob('contract', 'signed'));
      for (const job of jobs) await harness.enqueue(job);
      for (const job of jobs) {
        expect((await harness.finished(job.webhook_id)).state).toBe('failed');
      }
      const circuits = circuitsOf(redis, harness);
      expect(await circuits.view(circuitTarget(harness.target))).toMatchObject({
        state: 'closed',
        consecutive_failures: 0,
        held_actions: 0,
      });
      expect(harness.sandbox.api.calls).toHaveLength(jobs.length);
    } finally {
      redis.disconnect();
      await harness.close();
    }
  });
});
