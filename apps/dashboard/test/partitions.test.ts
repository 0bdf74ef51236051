// With QUEUE_PARTITIONS=4 the operator API, the metrics, the trends and the board cover every
// partition and say nothing of them: a webhook is found from its id, dead letters of all the
// partitions come in one list, newest first, and the counts are sums.
import { UnrecoverableError, Worker } from 'bullmq';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { countMinute } from '@pw/shared/outcomes';
import { actionJobId, keys, QUEUE_NAMES } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import type { ActionJobData } from '@pw/shared/queue';
import { openCircuit } from '@pw/test-utils';
import { notifyCustomer, startDashboard, webhookOf } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
let workers: Worker<ActionJobData>[];
beforeAll(() => {
  h = startDashboard({ partitions: 4, metricsRefreshMs: 50 });
  // A stand-in worker on each partition's queue: it fails every action for good, recording the
  // outcome as ours does.
  workers = h.partitions.prefixes.map(
    (prefix, index) =>
      new Worker<ActionJobData>(
        QUEUE_NAMES.actions,
        async (job) => {
          const outcomes = h.outcomesByPartition[index]!;
          const { webhook_id: webhookId, action } = job.data;
          if (await outcomes.get(webhookId)) {
            await outcomes.started(webhookId, action);
            await outcomes.failed(webhookId, action, 'failed', 'POST /x answered 400');
          }
          throw new UnrecoverableError('POST /x answered 400');
        },
        { connection: h.redis, prefix, concurrency: 5 },
      ),
  );
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.close()));
  await h.close();
});

/** A webhook of partition `index` taken in as the ingress does, its one action failed for good. */
async function deadLetterIn(index: number): Promise<string> {
  const webhookId = h.partitions.newWebhookId(index);
  await h.intake.add(webhookOf(webhookId, 'quote.status_changed', ['notify_customer']));
  const queue = h.queues.partition(index);
  const jobId = actionJobId(webhookId, 'notify_customer');
  await vi.waitFor(async () => expect(await queue.getJobState(jobId)).toBe('failed'), {
    timeout: 10_000,
    interval: 20,
  });
  return webhookId;
}

/** The audit entries on the record streams (partition 0's carries them all). */
async function auditEntries(): Promise<object[]> {
  const streams = h.partitions.prefixes.map((prefix) => recordStreamKey(prefix));
  const entries = (await Promise.all(streams.map((key) => h.redis.xrange(key, '-', '+')))).flat();
  return entries
    .filter(([, fields]) => fields[1] === 'audit')
    .map(([, fields]) => JSON.parse(fields[3] ?? '{}') as object);
}

interface Page {
  dead_letters: { webhook_id: string; failed_at: string }[];
  next_cursor: string | null;
}

/** The webhooks whose action is a dead letter, oldest first (the tests run in this order). */
const made: string[] = [];

it('GET /api/webhooks/:id answers a webhook of partition 3 from its id', async () => {
  const webhookId = h.partitions.newWebhookId(3);
  await workers[3]!.pause();
  await h.intake.add(webhookOf(webhookId, 'quote.status_changed', ['notify_customer']));
  const response = await h.as('get', `/api/webhooks/${webhookId}`);
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({
    webhook_id: webhookId,
    actions: [{ name: 'notify_customer', state: 'waiting' }],
  });
  // Not under partition 0's keys, where a reader that ignored partitions would look.
  expect(await h.outcomes.get(webhookId)).toBeNull();
  await workers[3]!.resume();
  made.push(webhookId);
  await vi.waitFor(
    async () => expect(await h.queues.partition(3).getFailedCount()).toBeGreaterThan(0),
    { timeout: 10_000 },
  );
});

it('lists the dead letters of every partition once, newest first, across pages', async () => {
  for (const index of [0, 1, 2, 3, 2, 1, 0, 3, 3, 1, 2]) made.push(await deadLetterIn(index));
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const response = await h.as(
      'get',
      `/api/dead-letters?limit=5${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(response.status).toBe(200);
    pages.push(response.body as Page);
    cursor = (response.body as Page).next_cursor;
  } while (cursor);
  expect(pages.map((page) => page.dead_letters.length)).toEqual([5, 5, 2]);
  const listed = pages.flatMap((page) => page.dead_letters);
  expect(new Set(listed.map((letter) => letter.webhook_id))).toEqual(new Set(made));
  const times = listed.map((letter) => Date.parse(letter.failed_at));
  expect(times).toEqual([...times].sort((a, b) => b - a));
  // The newest first: the last one made.
  expect(listed[0]?.webhook_id).toBe(made.at(-1));

  const dryRun = await h.as('post', '/api/dead-letters/replay?dry_run=true');
  expect(dryRun.body).toMatchObject({ would_replay: made.length });
});

it("replays a webhook of partition 2 in its partition's queue, and audits it", async () => {
  const webhookId = made.find((id) => h.partitions.ofWebhookId(id) === 2)!;
  await workers[2]!.pause();
  const response = await h.as('post', `/api/webhooks/${webhookId}/replay`);
  expect(response.status).toBe(202);
  expect(response.body).toEqual({ webhook_id: webhookId, replayed: ['notify_customer'] });
  const jobId = actionJobId(webhookId, 'notify_customer');
  expect(await h.queues.partition(2).getJobState(jobId)).toBe('waiting');
  expect(await h.outcomesByPartition[2]!.get(webhookId)).toMatchObject({
    actions: [{ name: 'notify_customer', state: 'waiting' }],
  });
  expect(await auditEntries()).toContainEqual(
    expect.objectContaining({ action: 'replay', target: webhookId }),
  );
});

it('sums the partitions in the metrics, with no partition label', async () => {
  const failed = (await Promise.all(h.queues.all.map((queue) => queue.getFailedCount()))).reduce(
    (sum, n) => sum + n,
    0,
  );
  // Read every 50 ms here (METRICS_REFRESH_MS in a dashboard): the jobs above within a few reads.
  const scrape = async () => (await h.as('get', '/metrics')).text;
  await expect.poll(scrape).toContain(`queue_jobs{queue="actions",state="failed"} ${failed}`);
  const text = await scrape();
  // One series per state, whatever the number of partitions.
  expect(text.split('\n').filter((line) => line.startsWith('queue_jobs{'))).toHaveLength(6);
  expect(text).not.toContain('partition=');
});

it('sums two partitions in the trends', async () => {
  // Five minutes ago, in the hour the trends show whenever the test runs.
  const minute = countMinute(new Date(Date.now() - 300_000));
  const counts = [
    [0, 'ingressCounts', 'accepted', 3],
    [2, 'ingressCounts', 'accepted', 4],
    [1, 'actionCounts', 'completed', 2],
    [3, 'actionCounts', 'completed', 5],
  ] as const;
  for (const [index, kind, field, count] of counts) {
    await h.redis.hincrby(keys[kind](h.partitions.prefix(index), minute), field, count);
  }
  const response = await h.as('get', '/api/trends');
  const trends = response.body as {
    minutes: { at: string; accepted: number; completed: number }[];
    oldest_waiting_seconds: Record<string, number | null>;
  };
  expect(trends.minutes.find((entry) => entry.at === minute)).toMatchObject({
    accepted: 7,
    completed: 7,
  });
  expect(Object.keys(trends.oldest_waiting_seconds)).toEqual(['actions']);
});

it("shows each partition as a queue of its own on the board, which retries a partition's failed job and audits it", async () => {
  const response = await h.as('get', '/admin/queues/api/queues');
  expect(response.status).toBe(200);
  const queues = (response.body as { queues: { name: string; displayName?: string }[] }).queues;
  expect(queues.map((queue) => queue.displayName).sort()).toEqual([
    'actions · 0',
    'actions · 1',
    'actions · 2',
    'actions · 3',
  ]);
  const board = queues.find((queue) => queue.displayName === 'actions · 1')!;
  const jobId = actionJobId(
    made.find((id) => h.partitions.ofWebhookId(id) === 1)!,
    'notify_customer',
  );
  await workers[1]!.pause();
  const retried = await h.as(
    'put',
    `/admin/queues/api/queues/${board.name}/${encodeURIComponent(jobId)}/retry`,
  );
  expect(retried.status).toBe(204);
  expect(await h.queues.partition(1).getJobState(jobId)).toBe('waiting');
  await vi.waitFor(async () =>
    expect(await auditEntries()).toContainEqual(
      expect.objectContaining({ action: 'retry_job', target: jobId }),
    ),
  );
});

it('closing a circuit wakes the jobs it held in every partition', async () => {
  const target = 'https://partner.test/partitions';
  const held: { id: string; order: number }[] = [];
  for (const index of [1, 3]) {
    const webhookId = h.partitions.newWebhookId(index);
    const job = await h.queues.partition(index).add('notify_customer', notifyCustomer(webhookId), {
      jobId: actionJobId(webhookId, 'notify_customer'),
      delay: 600_000,
    });
    held.push({ id: job.id!, order: job.timestamp });
  }
  await openCircuit(h.redis, h.prefix, target, { failures: 5, probeInMs: 600_000, held });
  const response = await h.as('put', `/api/circuits/${encodeURIComponent(target)}`).send({
    state: 'closed',
  });
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ state: 'closed', woken: 2 });
  expect(await h.queues.partition(1).getJobState(held[0]!.id)).not.toBe('delayed');
  expect(await h.queues.partition(3).getJobState(held[1]!.id)).not.toBe('delayed');
});
