import { QueueEvents } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countMinute } from '@pw/shared/outcomes';
import { QUEUE_NAMES, keys } from '@pw/shared/queue';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { capturedLog, newTestRedis, testRedisUrl } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// A call's end (the record's completion, its count, stream entry and announcement, the entity's
// turn given back) is sent on the worker's one connection without waiting for its reply, ahead of
// BullMQ's move of the job to completed, so that the two leave in one write (docs/redis-cost.md).
// What a reader relies on: once BullMQ says a job completed, its record says so too.

const { log, logs } = capturedLog('worker-test', 'error');

const KINDS = ['quote', 'contract', 'sales'] as const;

let h: WorkerHarness;
beforeAll(async () => {
  h = await startWorkerHarness({
    concurrency: 20,
    log,
  });
});
afterAll(() => h.close());

it('once BullMQ has a job completed, the record has its completion', async () => {
  // The common path: calls through a circuit the worker knows clean (a target never answered is
  // suspect until its first answer).
  const first = webhookJob('quote', 'approved');
  await h.enqueue(first);
  await h.finished(first.webhook_id);
  await expect.poll(() => h.worker.circuitCopy.clean(circuitTarget(h.target))).toBe(true);
  const events = new QueueEvents(QUEUE_NAMES.actions, {
    connection: { url: testRedisUrl() },
    prefix: h.partitions.prefix(0),
  });
  await events.waitUntilReady();
  // Read at once from another connection, as an operator's or a waiter's read would.
  const reader = newTestRedis();
  const reads: Promise<{ action: string; outcome: WebhookOutcome | null }>[] = [];
  events.on('completed', ({ jobId }) => {
    const [webhookId, action] = jobId.split('.') as [string, string];
    reads.push(
      h.outcomes[0]!.via(reader)
        .get(webhookId)
        .then((outcome) => ({ action, outcome })),
    );
  });
  try {
    const jobs = Array.from({ length: 60 }, (_, i) =>
      webhookJob(KINDS[i % KINDS.length]!, 'approved'),
    );
    await Promise.all(jobs.map((job) => h.enqueue(job)));
    // One at a time: the waiters share a subscriber, which each unsubscribes when done.
    for (const job of jobs) await h.finished(job.webhook_id);
    const actions = jobs.reduce((sum, job) => sum + job.actions.length, 0);
    await expect.poll(() => reads.length).toBe(actions);
    for (const { action, outcome } of await Promise.all(reads)) {
      expect(outcome?.actions.find((a) => a.name === action)).toMatchObject({ state: 'completed' });
    }
  } finally {
    await events.close();
    reader.disconnect();
  }
});

it('a completion Redis refuses to record is told, and the job completes without a second call', async () => {
  // The minute's count of completions, which only the call's end writes, made a string: its
  // HINCRBY fails (WRONGTYPE) while the rest of the end and BullMQ's move succeed.
  const redis = newTestRedis();
  const now = Date.now();
  const minutes = [now, now + 60_000].map((ms) =>
    keys.actionCounts(h.prefix, countMinute(new Date(ms))),
  );
  try {
    for (const key of minutes) await redis.set(key, 'not a hash', 'EX', 180);
    const job = webhookJob('quote', 'approved');
    await h.enqueue(job);
    const outcome = await h.finished(job.webhook_id);
    expect(outcome.actions.map((action) => [action.state, action.attempts])).toEqual(
      job.actions.map(() => ['completed', 1]),
    );
    const calls = h.sandbox.api.calls.filter((call) =>
      call.headers['idempotency-key']?.startsWith(`${job.webhook_id}:`),
    );
    expect(calls).toHaveLength(job.actions.length);
    // Told once per action, at error level, with the webhook and the action.
    const told = () =>
      logs
        .filter((line) => line.webhook_id === job.webhook_id)
        .map((line) => [line.level, line.action, String(line.msg)])
        .sort();
    await expect
      .poll(told)
      .toEqual(
        [...job.actions]
          .sort()
          .map((action) => [
            'error',
            action,
            'completion not recorded: the job completes without it',
          ]),
      );
  } finally {
    await redis.del(...minutes);
    redis.disconnect();
  }
});
