// A job whose worker died mid-call and that stalled more often than allowed is failed by BullMQ
// itself, outside any processor: its outcome record must still say so, with the reason.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { actionJobId, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import { testRedisUrl } from '@pw/test-utils';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';
import { webhookJob } from './fixtures.js';

let harness: WorkerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * Another worker (a 500 ms lock) takes the next action job, then dies: its lock is never renewed.
 * Returns the job's id.
 */
async function takenByADyingWorker(h: WorkerHarness): Promise<string | undefined> {
  const connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const dying = new Worker<ActionJobData>(QUEUE_NAMES.actions, null, {
    connection,
    prefix: h.prefix,
    lockDuration: 500,
  });
  const job = await dying.getNextJob('dying-worker-token');
  connection.disconnect();
  return job?.id;
}

it('records an action failed for stalling (its worker died holding it) as failed, with the reason', async () => {
  harness = await startWorkerHarness({ lockMs: 500, maxStalledCount: 0 });
  // Our worker takes no action job for now; the intake has written the record and the job.
  await harness.worker.actions.pause(true);
  const data = webhookJob('contract', 'draft');
  expect(data.actions).toEqual(['generate_documents']);
  await harness.enqueue(data);

  // Another worker takes the action job, then dies: its lock is never renewed.
  expect(await takenByADyingWorker(harness)).toBe(
    actionJobId(data.webhook_id, 'generate_documents'),
  );

  // Ours looks for stalled jobs again: the job stalled once, more than allowed.
  await harness.worker.actions.resume();
  const outcome = await harness.until(
    data.webhook_id,
    (seen) =>
      seen.actions.find((action) => action.name === 'generate_documents')?.state === 'failed',
  );
  expect(outcome.state).toBe('failed');
  expect(
    outcome.actions.find((action) => action.name === 'generate_documents')?.last_error,
  ).toMatch(/stalled/);
  // The partner was never called for it: the dead worker made no call, and ours did not retry.
  expect(harness.sandbox.api.calls).toEqual([]);
});

it('counts the call of a first try whose worker died during it, once, when the job runs again', async () => {
  harness = await startWorkerHarness({ lockMs: 500 });
  await harness.worker.actions.pause(true);
  const data = webhookJob('contract', 'draft');
  await harness.enqueue(data);

  // A first try writes its record once, at its end; its worker dies before it: nothing counted.
  expect(await takenByADyingWorker(harness)).toBe(
    actionJobId(data.webhook_id, 'generate_documents'),
  );
  expect((await harness.outcomes[0]!.get(data.webhook_id))?.actions[0]).toMatchObject({
    attempts: 0,
  });

  // Ours takes the stalled job back and completes it: the dead try may have made its call, so it
  // counts, with ours.
  await harness.worker.actions.resume();
  const outcome = await harness.until(data.webhook_id, (seen) => seen.state === 'completed');
  expect(outcome.actions[0]).toMatchObject({ name: 'generate_documents', attempts: 2 });
  expect(harness.sandbox.api.calls).toHaveLength(1);
});
