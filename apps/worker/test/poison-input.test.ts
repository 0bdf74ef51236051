import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData, AcceptedWebhook } from '@pw/shared/queue';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { newTestRedis } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness, trickle } from './harness.js';
import type { WorkerHarness } from './harness.js';

// A poison input: the partner answers 500 to every call about one customer and serves the rest.
// It opens the circuit, but cannot hold it open: the probes are the others', and once the target
// serves them the poison's failures no longer count, and it spends its attempts. With nothing else
// to serve, a poison input looks like an outage (held); it is told apart while others are served.

const THRESHOLD = 3;
const PROBE_MS = 400;
const ATTEMPTS = 3;
const POISON = 'C-poison';
const POLICY = {
  attempts: ATTEMPTS,
  backoff: { type: 'fixed', delay_ms: 100 },
  circuit: { failureThreshold: THRESHOLD, probeIntervalMs: PROBE_MS },
} as const;

/** A webhook about `customer`: a contract made active sets off 4 actions, each a call. */
function contractOf(customer: string): AcceptedWebhook {
  const job = webhookJob('contract', 'active');
  job.event.customer_id = customer;
  return job;
}

/** The records count every call the partner saw, probes included, and nothing else. */
function expectAttemptsAreCalls(harness: WorkerHarness, outcomes: WebhookOutcome[]): void {
  for (const outcome of outcomes) {
    for (const action of outcome.actions) {
      const key = `${outcome.webhook_id}:${action.name}`;
      const calls = harness.sandbox.api.calls.filter(
        (call) => call.headers['idempotency-key'] === key,
      );
      expect(action.attempts, key).toBe(calls.length);
    }
  }
}

describe('a poison input', { timeout: 60_000 }, () => {
  it('is told from an outage: actions whose probes fail while the partner serves nothing stay held however often, and complete once it is back', async () => {
    const harness = await startWorkerHarness(POLICY);
    try {
      // Every call fails until the threshold's inputs have opened the circuit and five probes
      // failed: counted in calls, not in time, so that a slow machine cannot shorten the outage.
      const failing = THRESHOLD + 5;
      harness.sandbox.api.failNext({ path: /.*/, status: 503, times: failing });
      const jobs = Array.from({ length: THRESHOLD }, () => webhookJob('contract', 'signed'));
      for (const job of jobs) await harness.enqueue(job);
      const outcomes: WebhookOutcome[] = [];
      for (const job of jobs) {
        const outcome = await harness.finished(job.webhook_id, 40 * PROBE_MS);
        expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
        outcomes.push(outcome);
      }
      const calls = harness.sandbox.api.calls;
      expect(calls.filter((call) => call.status === 503)).toHaveLength(failing);
      expect(calls.slice(failing).every((call) => call.status === 200)).toBe(true);
      expectAttemptsAreCalls(harness, outcomes);
    } finally {
      await harness.close();
    }
  });
});

describe('poison inputs among others', { timeout: 60_000 }, () => {
  it('opens the circuit but cannot hold it open: every other webhook completes within a few probe intervals, the poison actions end as dead letters after spending their attempts', async () => {
    const harness = await startWorkerHarness(POLICY);
    const redis = newTestRedis();
    const actions = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
      connection: redis,
      prefix: harness.prefix,
    });
    const circuits = new CircuitBreaker(redis, {
      queuePrefix: harness.prefix,
      failureThreshold: THRESHOLD,
      probeIntervalMs: PROBE_MS,
      leaseMs: 30_000,
    });
    const target = circuitTarget(harness.target);
    try {
      harness.sandbox.api.failNext({ path: /.*/, carrying: POISON, status: 500, times: Infinity });
      // As many poison webhooks (inputs) as the threshold: their failures open the circuit.
      const poisons = Array.from({ length: THRESHOLD }, () => contractOf(POISON));
      for (const poison of poisons) await harness.enqueue(poison);
      await expect.poll(async () => (await circuits.view(target)).state).toBe('open');

      const healthy = Array.from({ length: 10 }, (_, i) => contractOf(`C-healthy-${i}`));
      const enqueuedAt = Date.now();
      for (const job of healthy) await harness.enqueue(job);
      let last = 0;
      for (const job of healthy) {
        const outcome = await harness.finished(job.webhook_id, 15 * PROBE_MS);
        expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
        for (const action of outcome.actions)
          last = Math.max(last, Date.parse(action.completed_at!));
      }
      // The newest fresh job is the next probe: one interval (up to 40% longer), then the held
      // jobs at once; a few intervals on a machine loaded by other suites.
      expect(last - enqueuedAt).toBeLessThan(10 * PROBE_MS);

      // The partner goes on serving other webhooks while the poison is retried.
      const serving = trickle(harness, () => contractOf(`C-later-${Math.random()}`), PROBE_MS);
      const dead = await Promise.all(
        poisons.map((poison) => harness.finished(poison.webhook_id, 30_000)),
      ).finally(() => serving.stop());
      for (const outcome of dead) expect(outcome.state).toBe('failed');
      const later = await serving.stop();
      for (const job of later)
        expect((await harness.finished(job.webhook_id)).state).toBe('completed');
      const failed = await actions.getFailed();
      expect(failed.map((job) => job.data.webhook_id).sort()).toEqual(
        poisons.flatMap((poison) => poison.actions.map(() => poison.webhook_id)).sort(),
      );
      for (const job of failed) expect(job.attemptsMade).toBe(ATTEMPTS);
      const outcomes = await Promise.all(
        [...healthy, ...later].map((job) => harness.finished(job.webhook_id)),
      );
      expectAttemptsAreCalls(harness, [...dead, ...outcomes]);
      const poisonCalls = harness.sandbox.api.calls.filter((call) => call.status !== 200);
      expect(poisonCalls.every((call) => JSON.stringify(call.body).includes(POISON))).toBe(true);
    } finally {
      await actions.close();
      redis.disconnect();
      await harness.close();
    }
  });
});
