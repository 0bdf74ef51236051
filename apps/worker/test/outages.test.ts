import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { QUEUE_NAMES } from '@pw/shared';
import type { WebhookJobData } from '@pw/shared';
import { testRedisUrl } from '@pw/test-utils';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

/** How long each dependency stays away: the scenario the issue names, not a wait for an event. */
const OUTAGE_MS = 30_000;

/**
 * The contract's default retry policy (8 attempts, exponential from 1 s with jitter): its seven
 * retries are spread over at least 63.5 s, so it rides out a 30-second outage.
 */
const DEFAULT_POLICY = {
  attempts: 8,
  backoff: { type: 'exponential', delay_ms: 1000 },
} as const;

async function failedActions(harness: WorkerHarness): Promise<number> {
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

/** Puts the jobs on the queue and resolves once every action has failed a first time. */
async function enqueueAndSeeThemFail(harness: WorkerHarness, jobs: WebhookJobData[]) {
  for (const job of jobs) await harness.enqueue(job);
  for (const job of jobs) {
    await harness.until(job.webhook_id, (o) => o.actions.every((a) => a.state === 'retrying'));
  }
}

/** Every action completed: failed tries while it was away, then one that got through. */
async function expectAllCompleted(harness: WorkerHarness, jobs: WebhookJobData[]) {
  for (const job of jobs) {
    const outcome = await harness.finished(job.webhook_id, 60_000);
    expect(outcome.state).toBe('completed');
    for (const action of outcome.actions) {
      expect(action.attempts).toBeGreaterThanOrEqual(2);
      // Attempts were left: none came near the dead letters.
      expect(action.attempts).toBeLessThan(DEFAULT_POLICY.attempts);
    }
  }
  expect(await failedActions(harness)).toBe(0);
}

// The two outages run side by side, each with its own worker, sandbox and queue prefix.
describe.concurrent('a dependency away for 30 seconds, then back', { timeout: 120_000 }, () => {
  it('the partner API: actions wait with backoff and complete; no dead letter', async () => {
    const harness = await startWorkerHarness(DEFAULT_POLICY);
    try {
      await harness.sandbox.api.down();
      const away = sleep(OUTAGE_MS);
      const jobs = [webhookJob('quote', 'approved'), webhookJob('contract', 'active')];
      await enqueueAndSeeThemFail(harness, jobs);
      await away;
      await harness.sandbox.api.up();
      await expectAllCompleted(harness, jobs);
      expect(harness.sandbox.api.calls.every((call) => call.status === 200)).toBe(true);
    } finally {
      await harness.close();
    }
  });

  it('the identity provider: actions wait for a token and complete; no dead letter', async () => {
    const harness = await startWorkerHarness(DEFAULT_POLICY);
    try {
      await harness.sandbox.idp.pause();
      const away = sleep(OUTAGE_MS);
      const jobs = [webhookJob('sales', 'converted'), webhookJob('contract', 'signed')];
      await enqueueAndSeeThemFail(harness, jobs);
      await away;
      // No call went out without a token.
      expect(harness.sandbox.api.calls).toHaveLength(0);
      await harness.sandbox.idp.resume();
      await expectAllCompleted(harness, jobs);
    } finally {
      await harness.close();
    }
  });
});
