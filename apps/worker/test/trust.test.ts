// What an outside sender controls (the event's ids and fields, the partner's answers) cannot
// steer the worker's calls, break its look-ups or blow up what it records
// (docs/architecture.md#actions-and-the-worker, docs/reliability-and-security.md#security),
// checked against the real worker and the sandbox partner API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { MAX_ERROR_LENGTH } from '@pw/shared/outcomes';
import { actionJobId, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionOutcome } from '@pw/shared/outcomes';
import type { ActionJobData } from '@pw/shared/queue';
import { testRedisUrl } from '@pw/test-utils';
import { INVALID_PATH_VALUE } from '../src/actions/expand-path.js';
import { MAX_RETRY_AFTER_MS } from '../src/partner-api.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

let h: WorkerHarness;
let actions: Queue<ActionJobData>;
let redis: Redis;
beforeAll(async () => {
  h = await startWorkerHarness();
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  actions = new Queue(QUEUE_NAMES.actions, {
    connection: { url: testRedisUrl() },
    prefix: h.prefix,
  });
});
afterAll(async () => {
  await actions.close();
  redis.disconnect();
  await h.close();
});

interface CallBody {
  webhook_id: string;
  action: string;
  commission?: unknown;
}
const callsOf = (webhookId: string) =>
  h.sandbox.api.calls.filter((call) => (call.body as CallBody | null)?.webhook_id === webhookId);
const byName = (list: ActionOutcome[]) => new Map(list.map((action) => [action.name, action]));

/** A webhook job whose event has `field` set to `value` (its entity id too, when it is that). */
function jobWith(
  kind: 'quote' | 'contract' | 'sales',
  status: string,
  field: string,
  value: string,
) {
  const job = webhookJob(kind, status);
  const event = { ...job.event, [field]: value };
  const entityField = { quote: 'quote_id', contract: 'contract_id', sales: 'sales_id' }[kind];
  return { ...job, event, entity_id: field === entityField ? value : job.entity_id };
}

/** Resolves once the worker has settled a try of the job (retrying or failed) in BullMQ. */
function failedTry(jobId: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (job: Job | undefined) => {
      if (job?.id !== jobId) return;
      h.worker.actions.off('failed', listener);
      resolve();
    };
    h.worker.actions.on('failed', listener);
  });
}

describe('path placeholders: one segment each, never a dot segment', () => {
  it.each([
    ['quote', 'approved', 'quote_id', '..', ['lock_price']],
    ['quote', 'approved', 'customer_id', '.', ['notify_customer']],
    ['quote', 'sent', 'quote_ref_code', '%2e%2e', ['update_sales_opportunity']],
    [
      'contract',
      'active',
      'contract_id',
      '%2E.',
      ['generate_documents', 'activate_service', 'start_billing'],
    ],
    ['sales', 'converted', 'sales_id', '%252e%252e', ['update_crm']],
    ['sales', 'qualified', 'customer_id', '', ['start_follow_up_sequence']],
  ] as const)(
    '%s with %s %j: %j fail with invalid_path_value and make no call; the rest complete',
    async (kind, status, field, value, refused) => {
      const job = jobWith(kind, status, field, value);
      await h.enqueue(job);
      const outcome = await h.finished(job.webhook_id);
      expect(outcome.state).toBe('failed');
      for (const action of outcome.actions) {
        if ((refused as readonly string[]).includes(action.name)) {
          // Failed for good at once, no call made, so no attempt counted.
          expect(action).toMatchObject({ state: 'failed', attempts: 0 });
          expect(action.last_error).toMatch(new RegExp(`^${INVALID_PATH_VALUE}: `));
          expect(action.last_error).toContain(field);
          const dead = await actions.getJob(actionJobId(job.webhook_id, action.name));
          expect(await dead?.getState()).toBe('failed');
          expect(dead?.failedReason).toMatch(new RegExp(`^${INVALID_PATH_VALUE}: `));
        } else {
          expect(action).toMatchObject({ state: 'completed', attempts: 1, last_error: null });
        }
      }
      const calls = callsOf(job.webhook_id);
      expect(calls.map((call) => (call.body as CallBody).action).sort()).toEqual(
        outcome.actions
          .map((action) => action.name)
          .filter((name) => !(refused as readonly string[]).includes(name))
          .sort(),
      );
    },
  );
});

describe('look-ups keyed by metadata.market: configured entries only', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'a sale in market %s runs every action against the default target, with the default commission rate',
    async (market) => {
      const job = webhookJob('sales', 'converted');
      job.event.metadata = { market };
      await h.enqueue(job);
      const outcome = await h.finished(job.webhook_id);
      expect(outcome.state).toBe('completed');
      expect(outcome.actions.every((action) => action.attempts === 1)).toBe(true);
      const calls = callsOf(job.webhook_id);
      expect(calls).toHaveLength(3);
      const commission = calls.find((call) => call.path === '/commissions');
      expect((commission?.body as CallBody).commission).toEqual({
        amount: 62.5,
        currency: 'EUR',
        rate: 0.05,
      });
    },
  );
});

describe("bounds on what the partner's answers and the event's ids can cost", () => {
  it('a 503 with Retry-After: 999999999 delays the retry by one hour, not 31 years', async () => {
    const job = webhookJob('quote', 'approved');
    const jobId = actionJobId(job.webhook_id, 'lock_price');
    h.sandbox.api.failNext({
      path: `/quotes/${String(job.event.quote_id)}/price-lock`,
      status: 503,
      retryAfter: 999_999_999,
    });
    const tried = failedTry(jobId);
    const before = Date.now();
    await h.enqueue(job);
    await tried;
    const after = Date.now();
    const delayed = await actions.getJob(jobId);
    expect(await delayed?.getState()).toBe('delayed');
    expect(delayed?.delay).toBe(MAX_RETRY_AFTER_MS);
    // BullMQ's delayed set scores a job by the time it is due (in ms, times 4096).
    const score = Number(await redis.zscore(actions.toKey('delayed'), jobId));
    const dueAt = Math.floor(score / 0x1000);
    expect(dueAt).toBeGreaterThanOrEqual(before + MAX_RETRY_AFTER_MS);
    expect(dueAt).toBeLessThanOrEqual(after + MAX_RETRY_AFTER_MS);
    const outcome = await h.until(job.webhook_id, (o) =>
      o.actions.some((a) => a.name === 'lock_price' && a.state === 'retrying'),
    );
    expect(byName(outcome.actions).get('lock_price')?.last_error).toMatch(/^http_503: /);
    await delayed?.remove();
  });

  it('an action that failed once, its error naming a 10,000-character path, then completed has last_error null', async () => {
    const job = jobWith('quote', 'approved', 'quote_id', `Q-${'x'.repeat(10_000)}`);
    h.sandbox.api.failNext({ path: /\/price-lock$/, status: 503, retryAfter: 0 });
    await h.enqueue(job);
    const outcome = await h.finished(job.webhook_id);
    expect(byName(outcome.actions).get('lock_price')).toMatchObject({
      state: 'completed',
      attempts: 2,
      last_error: null,
    });
  });

  it.each([
    ['10,000', 10_000, 'http_503', 4],
    // Past the partner's header limit: Node's own HTTP server answers 431.
    ['100,000', 100_000, 'http_431', 1],
  ] as const)(
    'an action that keeps failing for a %s-character id keeps last_error and the job’s reason within the bound',
    async (_, length, code, attempts) => {
      const job = jobWith('quote', 'approved', 'quote_id', `Q-${'x'.repeat(length)}`);
      const path = new RegExp(`^/quotes/Q-x{${length}}/price-lock$`);
      h.sandbox.api.failNext({ path, status: 503, retryAfter: 0, times: 100 });
      await h.enqueue(job);
      const lockPrice = byName((await h.finished(job.webhook_id)).actions).get('lock_price');
      expect(lockPrice).toMatchObject({ state: 'failed', attempts });
      expect(lockPrice?.last_error?.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
      // The start of the path and what the partner answered survive the cut.
      expect(lockPrice?.last_error).toMatch(
        new RegExp(`^${code}: POST /quotes/Q-x+…x+/price-lock`),
      );
      // The record says failed once the worker has written it; BullMQ moves the job to its failed
      // set when the processor has ended (its entity's turn given back first).
      const jobId = actionJobId(job.webhook_id, 'lock_price');
      await expect.poll(async () => (await actions.getJob(jobId))?.failedReason).toBeDefined();
      const failed = await actions.getJob(jobId);
      expect(failed?.failedReason.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
      const traces = failed?.stacktrace ?? [];
      expect(traces.length).toBeGreaterThan(0);
      for (const trace of traces) {
        expect(trace.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
      }
    },
  );
});
