import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '@pw/shared';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import type { ActionJobData, WebhookJobData, WebhookOutcome } from '@pw/shared';
import { newTestRedis } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// A poison input: the partner answers 500 to every call about one customer and serves the rest.
// It opens the circuit, but cannot hold it open: the probes are the others', and once the target
// serves them the poison's failures no longer count, and it spends its attempts.

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
function contractOf(customer: string): WebhookJobData {
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
  it('is told from an outage: an action whose probes fail while the partner answers nothing stays held however often, and completes once it is back', async () => {
    const harness = await startWorkerHarness(POLICY);
    try {
      // Every call fails until the only action has opened the circuit and failed its probe five
      // times: counted in calls, not in time, so that a slow machine cannot shorten the outage.
      const failing = THRESHOLD + 5;
      harness.sandbox.api.failNext({ path: /.*/, status: 503, times: failing });
      const job = webhookJob('contract', 'signed');
      await harness.enqueue(job);
      const outcome = await harness.finished(job.webhook_id, 40 * PROBE_MS);
      expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
      const calls = harness.sandbox.api.calls;
      expect(calls.map((call) => call.status)).toEqual([...Array<number>(failing).fill(503), 200]);
      expect(outcome.actions[0]!.attempts).toBe(calls.length);
    } finally {
      await harness.close();
    }
  });

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
      const poison = contractOf(POISON);
      await harness.enqueue(poison);
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
      // Without the rotation they wait out the longest hold (a minute). With it, each held poison
      // action is the probe at most once before theirs (4, each interval up to 40% longer): about
      // 12 intervals, twice that on a machine loaded by other suites, still a sixth of the hold.
      expect(last - enqueuedAt).toBeLessThan(25 * PROBE_MS);

      const dead = await harness.finished(poison.webhook_id, 30_000);
      expect(dead.state).toBe('failed');
      const failed = await actions.getFailed();
      expect(failed.map((job) => job.data.webhook_id)).toEqual(
        Array(poison.actions.length).fill(poison.webhook_id),
      );
      for (const job of failed) expect(job.attemptsMade).toBe(ATTEMPTS);
      const outcomes = await Promise.all(healthy.map((job) => harness.finished(job.webhook_id)));
      expectAttemptsAreCalls(harness, [dead, ...outcomes]);
      const poisonCalls = harness.sandbox.api.calls.filter((call) => call.status !== 200);
      expect(poisonCalls.every((call) => JSON.stringify(call.body).includes(POISON))).toBe(true);
    } finally {
      await actions.close();
      redis.disconnect();
      await harness.close();
    }
  });
});
