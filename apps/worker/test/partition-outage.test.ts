import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '@pw/shared/queue';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { testRedisUrl } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';

// An outage seen by a worker over four partitions: one circuit for the target, its held jobs in
// every partition, all woken when it closes.

const OUTAGE_MS = 6000;
const THRESHOLD = 5;
const PROBE_MS = 500;
const CONCURRENCY = 10;

const isHeld = (outcome: WebhookOutcome) =>
  outcome.actions.some((action) => action.state === 'waiting' && action.held === 'circuit_open');

describe('a partner outage with four partitions', { timeout: 60_000 }, () => {
  it('holds the actions of every partition, wakes them all once it closes, and the partner sees the threshold and the probes', async () => {
    const harness = await startWorkerHarness({
      partitions: 4,
      concurrency: CONCURRENCY,
      attempts: 3,
      backoff: { type: 'fixed', delay_ms: 100 },
      circuit: { failureThreshold: THRESHOLD, probeIntervalMs: PROBE_MS },
    });
    try {
      // A circuit known clean: its first calls pass on this process's copy alone.
      const first = webhookJob('quote', 'approved');
      await harness.enqueue(first);
      await harness.finished(first.webhook_id);
      const target = circuitTarget(harness.target);
      await expect.poll(() => harness.worker.circuitCopy.clean(target)).toBe(true);
      const before = harness.sandbox.api.calls.length;

      harness.sandbox.api.failNext({ path: /.*/, status: 503, forMs: OUTAGE_MS });
      const jobs = Array.from({ length: 40 }, () => webhookJob('contract', 'active'));
      for (const job of jobs) await harness.enqueue(job);
      const partitions = new Set(jobs.map((job) => harness.partitions.ofWebhookId(job.webhook_id)));
      expect(partitions.size).toBe(4);
      const heldIn = new Set<number>();
      for (const job of jobs) {
        if (heldIn.size === 4) break;
        const partition = harness.partitions.ofWebhookId(job.webhook_id);
        if (!heldIn.has(partition)) {
          await harness.until(job.webhook_id, isHeld);
          heldIn.add(partition);
        }
      }

      for (const job of jobs) {
        expect((await harness.finished(job.webhook_id, OUTAGE_MS + 20_000)).state).toBe(
          'completed',
        );
      }
      for (const partition of harness.partitions.all()) {
        const queue = new Queue(QUEUE_NAMES.actions, {
          connection: { url: testRedisUrl() },
          prefix: harness.partitions.prefix(partition),
        });
        expect(await queue.getFailedCount()).toBe(0);
        await queue.close();
      }
      const failed = harness.sandbox.api.calls.slice(before).filter((call) => call.status === 503);
      // Calls already under way when the target went away fail too: at most one per slot.
      expect(failed.length).toBeLessThanOrEqual(
        THRESHOLD + CONCURRENCY + Math.ceil(OUTAGE_MS / PROBE_MS) + 1,
      );
    } finally {
      await harness.close();
    }
  });
});
