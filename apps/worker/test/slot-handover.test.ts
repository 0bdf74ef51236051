import { afterEach, expect, it } from 'vitest';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// A worker over two partitions with WORKER_CONCURRENCY 3: a slot that one partition's call frees
// goes to another partition's waiting job at once, even while every job that partition's BullMQ
// worker holds is still in its call (docs/operations.md, "Sizing WORKER_CONCURRENCY").

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** `count` webhooks of `partition`, each with one action (`notify_customer`). */
function webhooksOf(harness: WorkerHarness, partition: number, count: number): AcceptedWebhook[] {
  const found: AcceptedWebhook[] = [];
  while (found.length < count) {
    const job = { ...webhookJob('quote'), actions: ['notify_customer' as const] };
    if (harness.partitions.ofEntity(job.entity_id) === partition) found.push(job);
  }
  return found;
}

it(
  'hands a freed slot to a partition whose jobs are all in their calls',
  { timeout: 30_000 },
  async () => {
    h = await startWorkerHarness({ partitions: 2, concurrency: 3 });
    const harness = h;
    // Each webhook's call is held by the partner until the test lets it go.
    const hold = (job: AcceptedWebhook) =>
      harness.sandbox.api.hold(new RegExp(`/customers/${String(job.event.customer_id)}/`));
    const [a1, a2] = webhooksOf(harness, 0, 2) as [AcceptedWebhook, AcceptedWebhook];
    const b = webhooksOf(harness, 1, 4);
    const [heldA1, heldA2] = [hold(a1), hold(a2)];
    const heldB = b.map(hold);
    try {
      await harness.enqueue(a1);
      await harness.enqueue(a2);
      await Promise.all([heldA1.held(1), heldA2.held(1)]);
      for (const job of b) await harness.enqueue(job);
      // b1 takes the third slot; b2 is fetched and waits for one.
      await heldB[0]!.held(1);
      heldA1.release();
      await heldB[1]!.held(1);
      // Partition 1's two jobs are in their calls when a2's slot frees: b3 must have it now.
      heldA2.release();
      await heldB[2]!.held(1);
      expect([heldB[0]!.holding(), heldB[1]!.holding()]).toEqual([1, 1]);
    } finally {
      for (const held of heldB) held.release();
    }
    for (const job of [a1, a2, ...b]) {
      expect((await harness.finished(job.webhook_id)).state).toBe('completed');
    }
  },
);
