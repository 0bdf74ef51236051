import { afterAll, beforeAll, expect, it } from 'vitest';
import { channels } from '@pw/shared/queue';
import type { ActionOutcome, WebhookOutcome } from '@pw/shared/outcomes';
import { newTestRedis, startTcpProxy, testRedisUrl, throughProxy } from '@pw/test-utils';
import type { TcpProxy } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// What a waiter (`send --wait`, the console's live view) reads when the worker announces a change:
// it reads the webhook's record at once, as they do, and must find there the state announced. An
// announcement made before the state it announces leaves the waiter with an older state and no
// announcement to wake it again. The worker's connection goes through a slow line (what it sends
// reaches Redis 100 ms later), and the waiter reads straight away: it reads between the worker's
// announcement and the job's finish, where a record that counted on BullMQ's finished job to
// tell of a completion said `waiting`.

let h: WorkerHarness;
let slowLine: TcpProxy;
beforeAll(async () => {
  const direct = new URL(testRedisUrl());
  slowLine = await startTcpProxy(
    { host: direct.hostname, port: Number(direct.port || 6379) },
    { delayMs: 100 },
  );
  h = await startWorkerHarness({
    concurrency: 20,
    queueRedisUrl: throughProxy(testRedisUrl(), slowLine),
  });
});
afterAll(async () => {
  await h.close();
  await slowLine.close();
});

/** How far an action has come: an action never goes back to a lower step. */
const STEP: Record<ActionOutcome['state'], number> = {
  waiting: 0,
  active: 1,
  retrying: 1,
  failed: 2,
  completed: 2,
};

it('a waiter that reads the record at each announcement sees every completion, and never a step back', async () => {
  const subscriber = newTestRedis();
  const reads = new Map<string, Promise<WebhookOutcome | null>[]>();
  subscriber.on('message', (_channel: string, webhookId: string) => {
    const read = h.outcomes[0]!.get(webhookId);
    reads.set(webhookId, [...(reads.get(webhookId) ?? []), read]);
  });
  await subscriber.subscribe(channels.outcomeChanged(h.partitions.prefix(0)));
  // The common path: a first try through a circuit the worker knows clean (a target never
  // answered is suspect until its first answer).
  const first = webhookJob('quote', 'approved');
  await h.enqueue(first);
  await h.finished(first.webhook_id);
  await expect.poll(() => h.worker.circuitCopy.clean(circuitTarget(h.target))).toBe(true);
  try {
    const jobs = Array.from({ length: 10 }, (_, i) =>
      webhookJob(i % 2 ? 'quote' : 'sales', 'approved'),
    );
    for (const job of jobs) await h.enqueue(job);
    for (const job of jobs) await h.finished(job.webhook_id);
    for (const job of jobs) {
      const seen = await Promise.all(reads.get(job.webhook_id) ?? []);
      // The last announcement's read has what the last change wrote: every action completed.
      expect(seen.at(-1)).toMatchObject({
        state: 'completed',
        actions: job.actions.map(() => ({ state: 'completed', attempts: 1 })),
      });
      for (const [i, outcome] of seen.entries()) {
        for (const [j, action] of (outcome?.actions ?? []).entries()) {
          const before = seen[i - 1]?.actions[j];
          if (!before) continue;
          expect(STEP[action.state]).toBeGreaterThanOrEqual(STEP[before.state]);
          expect(action.attempts).toBeGreaterThanOrEqual(before.attempts);
        }
      }
    }
  } finally {
    subscriber.disconnect();
  }
});
