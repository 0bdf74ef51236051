import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '@pw/shared/queue';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import type { ActionJobData, AcceptedWebhook } from '@pw/shared/queue';
import { testRedisUrl } from '@pw/test-utils';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness, trickle } from './harness.js';
import type { WorkerHarness } from './harness.js';

// The circuit judges the partner target, never one input
// (docs/reliability-and-security.md#outages-the-circuit-breaker): an input the partner refuses
// during an outage does not close it, a burst of poison inputs does not hold ordinary ones, and
// a close that the next call proves false reopens it without spending that call's attempt.

const THRESHOLD = 10;
const PROBE_MS = 500;
const POLICY = {
  attempts: 3,
  backoff: { type: 'fixed', delay_ms: 100 },
  circuit: { failureThreshold: THRESHOLD, probeIntervalMs: PROBE_MS },
} as const;
/** The most probes an open circuit lets through in `ms`: one per interval. */
const probesIn = (ms: number) => Math.ceil(ms / PROBE_MS) + 1;

/** A quote about `customer`: approved, it sets off three actions, each a call. */
function quoteOf(customer: string): AcceptedWebhook {
  const job = webhookJob('quote', 'approved');
  job.event.customer_id = customer;
  return job;
}

async function deadLetters(harness: WorkerHarness) {
  const actions = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection: { url: testRedisUrl() },
    prefix: harness.prefix,
  });
  try {
    return await actions.getFailed();
  } finally {
    await actions.close();
  }
}

/** The changes of the circuit, as the worker counts them (`partner_circuit_changes_total`). */
async function changes(harness: WorkerHarness): Promise<Record<string, number>> {
  const { values } = await harness.metrics.circuitChanges.get();
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value.labels.change)] = value.value;
  return counts;
}

const completedAt = (outcome: WebhookOutcome) =>
  Math.max(...outcome.actions.map((action) => Date.parse(action.completed_at ?? '')));

describe.concurrent('an input the partner refuses during an outage', { timeout: 120_000 }, () => {
  it('a 404 to one odd input during an outage neither closes the circuit nor costs the ordinary actions an attempt; the partner sees the threshold and one probe per interval', async () => {
    const harness = await startWorkerHarness(POLICY);
    try {
      const OUTAGE_MS = 15_000;
      // The partner's front refuses the encoded slash of one customer at once; behind it the
      // service answers 503 to everything.
      harness.sandbox.api.failNext({ path: /C-odd%2F/, status: 404, times: Infinity });
      const until = harness.sandbox.api.failNext({ path: /.*/, status: 503, forMs: OUTAGE_MS });
      const ordinary = Array.from({ length: 8 }, (_, i) => quoteOf(`C-ordinary-${i}`));
      for (const job of ordinary) await harness.enqueue(job);
      const odd = trickle(harness, () => quoteOf(`C-odd/${Math.random()}`), 1000);
      await new Promise((resolve) => setTimeout(resolve, until - Date.now()));
      const odds = await odd.stop();

      for (const job of ordinary) {
        const outcome = await harness.finished(job.webhook_id, 30_000);
        expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
      }
      // Only the odd inputs' refused calls are dead letters: each failed at once, on its one call.
      const dead = await deadLetters(harness);
      for (const job of dead) {
        expect(job.data.action).toBe('notify_customer');
        expect(job.failedReason).toMatch(/^http_404/);
      }
      expect(dead.length).toBeLessThanOrEqual(odds.length);
      const during = harness.sandbox.api.calls.filter((call) => call.received_at.getTime() < until);
      expect(during.length).toBeLessThanOrEqual(THRESHOLD + probesIn(OUTAGE_MS));
      expect(await changes(harness)).toMatchObject({ opened: 1 });
      expect((await changes(harness)).reopened ?? 0).toBe(0);
    } finally {
      await harness.close();
    }
  });
});

describe.concurrent('poison inputs and false closes', { timeout: 120_000 }, () => {
  it('a burst of 40 poison quotes (120 actions) does not hold the ordinary ones: each completes within 10 probe intervals of its ack, and the poison ends as dead letters, attempts spent', async () => {
    const harness = await startWorkerHarness(POLICY);
    try {
      harness.sandbox.api.failNext({
        path: /.*/,
        carrying: 'C-poison',
        status: 500,
        times: Infinity,
      });
      const poison = Array.from({ length: 40 }, () => quoteOf('C-poison'));
      for (const job of poison) await harness.enqueue(job);
      await harness.until(poison[0]!.webhook_id, (outcome) =>
        outcome.actions.some((action) => action.held === 'circuit_open'),
      );
      const acks = new Map<string, number>();
      const ordinary = trickle(
        harness,
        () => {
          const job = quoteOf(`C-ordinary-${Math.random()}`);
          acks.set(job.webhook_id, Date.now());
          return job;
        },
        1000,
      );
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      // The partner goes on serving ordinary quotes until the poison has spent its attempts.
      const dead = await Promise.all(
        poison.map((job) => harness.finished(job.webhook_id, 90_000)),
      ).finally(() => ordinary.stop());
      const sent = await ordinary.stop();
      for (const job of sent) {
        const outcome = await harness.finished(job.webhook_id, 15_000);
        expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
        expect(completedAt(outcome) - acks.get(job.webhook_id)!).toBeLessThan(10 * PROBE_MS);
      }
      for (const outcome of dead) expect(outcome.state).toBe('failed');
      const letters = await deadLetters(harness);
      expect(letters).toHaveLength(120);
      for (const job of letters) expect(job.attemptsMade).toBe(POLICY.attempts);
    } finally {
      await harness.close();
    }
  });

  it('a close the next call proves false reopens the circuit: that action is held again, no attempt spent, and every action completes once the partner is back', async () => {
    const harness = await startWorkerHarness({ ...POLICY, attempts: 2 });
    try {
      const api = harness.sandbox.api;
      // 503 until the circuit is open and two probes failed, one 200 (the third probe), then
      // 503 again for five calls (the first call after the close, then probes), then served.
      api.failNext({ path: /.*/, status: 503, times: THRESHOLD + 2 });
      api.failNext({ path: /.*/, status: 200, times: 1 });
      api.failNext({ path: /.*/, status: 503, times: 5 });
      const jobs = Array.from({ length: THRESHOLD }, () => quoteOf(`C-${Math.random()}`));
      for (const job of jobs) await harness.enqueue(job);
      // The call after the one 200 (the probe that closed it) is the first after the close.
      const [closer] = await api.waitForCalls((call) => call.status === 200, 1, 30_000);
      await api.waitForCalls((call) => call.received_at > closer!.received_at, 1, 30_000);
      const first = api.calls[api.calls.indexOf(closer!) + 1]!;
      expect(first.status).toBe(503);
      const reopener = String(first.headers['idempotency-key']);
      const [webhookId, action] = reopener.split(':') as [string, string];
      // Held again (the call's attempt not spent), and told so in its record.
      const held = await harness.until(webhookId, (outcome) =>
        outcome.actions.some((one) => one.name === action && one.held === 'circuit_open'),
      );
      expect(held.state).not.toBe('failed');
      for (const job of jobs) {
        const outcome = await harness.finished(job.webhook_id, 30_000);
        expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
      }
      expect(await deadLetters(harness)).toHaveLength(0);
      expect(await changes(harness)).toMatchObject({ opened: 1, reopened: 1 });
    } finally {
      await harness.close();
    }
  });
});
