// The queue board cannot create or edit jobs (docs/reliability-and-security.md#security): a job
// added or edited through it would be sent by the worker to the partner API with the real bearer
// token, past every signature and schema check. Its retry, promote, clean and remove buttons stay,
// and each use is audited with the operator's name (docs/records.md). Driven through bull-board's
// own HTTP routes, as its UI calls them, against real queues.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { actionJobId, newWebhookId, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import {
  AUTH,
  failedAction as failedActionOf,
  HOST,
  standInWorker,
  startDashboard,
  webhookOf,
} from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
let worker: Worker<ActionJobData>;
/** Jobs the stand-in worker completes; it fails every other one for good. */
const passing = new Set<string>();

beforeAll(() => {
  h = startDashboard();
  worker = standInWorker(h, passing);
});
afterAll(async () => {
  await worker.close();
  await h.close();
});

const BOARD = '/admin/queues/api/queues';
const jobPath = (queue: string, id: string) => `${BOARD}/${queue}/${encodeURIComponent(id)}`;

const actionData = (webhookId: string): ActionJobData => ({
  webhook_id: webhookId,
  action: 'notify_customer',
  event_type: 'quote.status_changed',
  event: {},
  backoff: { type: 'fixed', delay_ms: 1 },
});

const failedAction = (webhookId: string) => failedActionOf(h, webhookId);

const total = async (queue: Queue) =>
  Object.values(await queue.getJobCounts()).reduce((sum, count) => sum + count, 0);

const refused = { error: { key: 'ERRORS.FORBIDDEN' }, message: expect.any(String) as string };

/** The audit lines of board actions that were carried out. */
const auditLines = (action: string) =>
  h.logs.filter(
    (line) => line.audit === true && line.msg === 'board action' && line.action === action,
  );

/** Each of the bulk retry, promote, remove and clean of the test below logged once, by its user. */
function expectBulkActionsAudited({ promoted, removed }: { promoted: string; removed: string }) {
  expect(auditLines('retry_all')).toEqual([
    expect.objectContaining({
      user: AUTH.user,
      queue: 'actions',
      job_status: 'failed',
      status: 200,
    }),
  ]);
  expect(auditLines('promote_job')).toEqual([
    expect.objectContaining({
      user: AUTH.user,
      queue: 'actions',
      job_id: promoted,
      status: 204,
    }),
  ]);
  expect(auditLines('promote_all')).toEqual([
    expect.objectContaining({ user: AUTH.user, queue: 'actions', status: 200 }),
  ]);
  expect(auditLines('remove_job')).toEqual([
    expect.objectContaining({ user: AUTH.user, queue: 'actions', job_id: removed, status: 204 }),
  ]);
  expect(auditLines('clean_all')).toEqual([
    expect.objectContaining({
      user: AUTH.user,
      queue: 'actions',
      job_status: 'completed',
      status: 200,
    }),
  ]);
}

// The describes below share the board, its stand-in worker and its log, and run in this order: a
// later test counts on what an earlier one left (the retried job, the audit lines so far).
describe('the queue board cannot create or edit jobs', () => {
  it('cannot add a job: the add route answers 403 and no job is added, and the attempt is logged', async () => {
    const before = await total(h.actions);
    const response = await h.as('post', `${BOARD}/${QUEUE_NAMES.actions}/add`).send({
      name: 'notify_customer',
      data: actionData('wh_AAAAAAAAAAAAAAAAAAAAAA'),
      options: {},
    });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(refused);
    expect(await total(h.actions)).toBe(before);
    await vi.waitFor(() =>
      expect(h.logs).toContainEqual(
        expect.objectContaining({
          audit: true,
          user: AUTH.user,
          method: 'POST',
          path: `${BOARD}/actions/add`,
          status: 403,
          msg: 'board action refused',
        }),
      ),
    );
  });

  it('refuses every other change to jobs and queues, and they stay as they were', async () => {
    const data = actionData('wh_BBBBBBBBBBBBBBBBBBBBBB');
    const id = actionJobId(data.webhook_id, data.action);
    // Delayed, as a held action is: the stand-in worker leaves it be.
    await h.actions.add(data.action, data, { jobId: id, delay: 60_000 });
    const job = jobPath(QUEUE_NAMES.actions, id);
    const queue = `${BOARD}/${QUEUE_NAMES.actions}`;
    const calls = [
      ['patch', `${job}/update-data`, { data: { webhook_id: 'wh_other' } }],
      ['patch', `${job}/delay`, { delay: 60_000 }],
      ['patch', `${job}/priority`, { priority: 1 }],
      ['put', `${job}/remove-unprocessed-children`, {}],
      ['put', `${queue}/pause`, {}],
      ['put', `${queue}/resume`, {}],
      ['put', `${BOARD}/pause`, {}],
      ['put', `${BOARD}/resume`, {}],
      ['put', `${queue}/empty`, {}],
      ['put', `${queue}/obliterate`, { force: true }],
      ['put', `${queue}/concurrency`, { concurrency: 1 }],
      ['put', `${queue}/rate-limit`, { max: 1, duration: 60_000 }],
      ['put', `${queue}/rate-limit/release`, {}],
      ['put', `${queue}/job-schedulers/nightly/run`, {}],
      ['put', `${queue}/job-schedulers/nightly/remove`, {}],
      ['patch', `${queue}/job-schedulers/nightly`, { repeat: { every: 1000 } }],
    ] as const;
    for (const [method, path, body] of calls) {
      const response = await h.as(method, path).send(body);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body, `${method} ${path}`).toEqual(refused);
    }
    const kept = await h.actions.getJob(id);
    expect(kept?.data).toEqual(data);
    expect(await kept?.getState()).toBe('delayed');
    expect(kept?.delay).toBe(60_000);
    expect(kept?.opts.priority ?? 0).toBe(0);
    expect(await h.actions.isPaused()).toBe(false);
    expect(await h.actions.getGlobalConcurrency()).toBeNull();
    await kept?.remove();
  });
});

describe('the queue board retries failed jobs', () => {
  it('retries a failed job, and logs who did it', async () => {
    const id = await failedAction('wh_CCCCCCCCCCCCCCCCCCCCCC');
    passing.add(id);
    const response = await h.as('put', `${jobPath(QUEUE_NAMES.actions, id)}/retry`);
    expect(response.status).toBe(204);
    await vi.waitFor(async () => expect(await h.actions.getJobState(id)).toBe('completed'), {
      timeout: 5000,
    });
    await vi.waitFor(() =>
      expect(auditLines('retry_job')).toEqual([
        expect.objectContaining({
          level: 'info',
          msg: 'board action',
          user: AUTH.user,
          route: 'PUT /api/queues/:queueName/:jobId/retry',
          queue: QUEUE_NAMES.actions,
          job_id: id,
          status: 204,
        }),
      ]),
    );
  });

  it('retries failed jobs only: a completed one would repeat a partner call', async () => {
    const id = actionJobId('wh_CCCCCCCCCCCCCCCCCCCCCC', 'notify_customer');
    const one = await h.as('put', `${jobPath(QUEUE_NAMES.actions, id)}/retry`);
    expect(one.status).toBe(403);
    expect(one.body).toEqual({
      error: { key: 'ERRORS.FORBIDDEN' },
      message: 'Only failed jobs can be retried',
    });
    const all = await h.as('put', `${BOARD}/${QUEUE_NAMES.actions}/retry/completed`);
    expect(all.status).toBe(403);
    expect(await h.actions.getJobState(id)).toBe('completed');
    // The board hides the buttons it would be refused.
    const listing = (await h.as('get', BOARD)).body as {
      queues: { readOnlyMode: boolean; allowRetries: boolean; allowCompletedRetries: boolean }[];
    };
    for (const queue of listing.queues) {
      expect(queue).toMatchObject({
        readOnlyMode: false,
        allowRetries: true,
        allowCompletedRetries: false,
      });
    }
  });
});

describe("the queue board's other buttons, each audited", () => {
  it('bulk retry, promote, remove and clean still work, each audited', async () => {
    const first = await failedAction('wh_DDDDDDDDDDDDDDDDDDDDDD');
    const second = await failedAction('wh_EEEEEEEEEEEEEEEEEEEEEE');
    passing.add(first).add(second);
    const retryAll = await h.as('put', `${BOARD}/${QUEUE_NAMES.actions}/retry/failed`);
    expect(retryAll.status).toBe(200);
    expect(retryAll.body).toMatchObject({ retried: 2 });
    await vi.waitFor(async () => expect(await h.actions.getJobState(second)).toBe('completed'), {
      timeout: 5000,
    });

    const delayed = actionJobId('wh_FFFFFFFFFFFFFFFFFFFFFF', 'notify_customer');
    passing.add(delayed);
    await h.actions.add('notify_customer', actionData('wh_FFFFFFFFFFFFFFFFFFFFFF'), {
      jobId: delayed,
      delay: 60_000,
    });
    expect((await h.as('put', `${jobPath(QUEUE_NAMES.actions, delayed)}/promote`)).status).toBe(
      204,
    );
    // Promoted, it runs at once.
    await vi.waitFor(async () => expect(await h.actions.getJobState(delayed)).toBe('completed'), {
      timeout: 5000,
    });
    expect((await h.as('put', `${BOARD}/${QUEUE_NAMES.actions}/promote`)).status).toBe(200);
    expect((await h.as('put', `${jobPath(QUEUE_NAMES.actions, first)}/clean`)).status).toBe(204);
    expect(await h.actions.getJob(first)).toBeUndefined();
    expect((await h.as('put', `${BOARD}/${QUEUE_NAMES.actions}/clean/completed`)).status).toBe(200);

    await vi.waitFor(() => expectBulkActionsAudited({ promoted: delayed, removed: first }));
  });

  it('audits an allowed action even when the client hangs up before the answer', async () => {
    const server = createServer(h.app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      await once(socket, 'connect');
      const auth = Buffer.from(`${AUTH.user}:${AUTH.password}`).toString('base64');
      // The request sent whole (a destroy right after `end` may drop what is still buffered),
      // then the connection torn down before any answer.
      await new Promise<void>((resolve) =>
        socket.end(
          `PUT ${BOARD}/${QUEUE_NAMES.actions}/clean/wait HTTP/1.1\r\nHost: ${HOST}\r\n` +
            `Authorization: Basic ${auth}\r\nContent-Length: 0\r\n\r\n`,
          resolve,
        ),
      );
      socket.destroy();
      await vi.waitFor(
        () =>
          expect(auditLines('clean_all')).toContainEqual(
            expect.objectContaining({ user: AUTH.user, queue: 'actions', job_status: 'wait' }),
          ),
        { timeout: 5000 },
      );
    } finally {
      server.close();
    }
  });
});

describe('removing a job through the queue board', () => {
  it("removing a job leaves its event's deduplication: a repeat still adds nothing", async () => {
    const first = webhookOf(newWebhookId(), 'quote.status_changed', ['notify_customer']);
    await h.intake.add(first);
    const jobId = actionJobId(first.webhook_id, 'notify_customer');
    await vi.waitFor(async () => expect(await h.actions.getJobState(jobId)).toBe('failed'), {
      timeout: 5000,
    });
    expect((await h.as('put', `${jobPath(QUEUE_NAMES.actions, jobId)}/clean`)).status).toBe(204);
    expect(await h.actions.getJob(jobId)).toBeUndefined();

    const repeat = { ...first, webhook_id: newWebhookId(), received_at: new Date().toISOString() };
    const answer = await h.intake.accept(repeat);
    expect(answer).toMatchObject({ duplicate: true, ack: { webhook_id: first.webhook_id } });
    expect(
      await h.actions.getJob(actionJobId(repeat.webhook_id, 'notify_customer')),
    ).toBeUndefined();
  });
});
