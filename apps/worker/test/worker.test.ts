import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionsConfigSchema } from '@pw/shared/actions';
import { startSandbox } from '@pw/sandbox';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

let h: WorkerHarness;
beforeAll(async () => {
  h = await startWorkerHarness();
});
afterAll(async () => {
  await h.close();
});

const callsOf = (webhookId: string) =>
  h.sandbox.api.calls.filter(
    (call) => call.body && (call.body as { webhook_id?: string }).webhook_id === webhookId,
  );

describe.each([
  ['quote', 'approved', ['/customers/C-', '/sales-opportunities/by-quote/QR-', '/quotes/Q-']],
  ['contract', 'active', ['/contracts/K-', '/customers/C-', '/contracts/K-', '/contracts/K-']],
  ['sales', 'converted', ['/crm/opportunities/S-', '/commissions', '/metrics/conversions']],
] as const)('%s end to end', (kind, status, pathStarts) => {
  it('calls the partner API once per action with an issued token and the idempotency key', async () => {
    const job = webhookJob(kind, status);
    expect(job.actions).toHaveLength(pathStarts.length);
    await h.enqueue(job);
    const calls = await h.sandbox.api.waitForCalls(
      (call) => (call.body as { webhook_id?: string } | null)?.webhook_id === job.webhook_id,
      job.actions.length,
    );
    expect(calls.map((call) => (call.body as { action: string }).action).sort()).toEqual(
      [...job.actions].sort(),
    );
    for (const call of calls) {
      const body = call.body as { webhook_id: string; action: string; event: unknown };
      expect(call.headers['idempotency-key']).toBe(`${job.webhook_id}:${body.action}`);
      const token = call.headers.authorization?.replace(/^Bearer /, '') ?? '';
      expect(await h.sandbox.idp.isIssued(token)).toBe(true);
      expect(body.event).toEqual(job.event);
    }
    for (const start of pathStarts)
      expect(calls.some((call) => call.path.startsWith(start))).toBe(true);
    const outcome = await h.finished(job.webhook_id);
    expect(outcome.state).toBe('completed');
    expect(
      outcome.actions.every((action) => action.state === 'completed' && action.attempts === 1),
    ).toBe(true);
    expect(callsOf(job.webhook_id)).toHaveLength(job.actions.length);
  });
});

describe('commission', () => {
  it('sends the computed commission with calculate_commission', async () => {
    const job = webhookJob('sales', 'converted');
    await h.enqueue(job);
    const [call] = await h.sandbox.api.waitForCalls(
      (c) =>
        c.path === '/commissions' &&
        (c.body as { webhook_id: string }).webhook_id === job.webhook_id,
      1,
    );
    expect((call!.body as { commission: unknown }).commission).toEqual({
      amount: 62.5,
      currency: 'EUR',
      rate: 0.05,
    });
  });
});

describe('retries', () => {
  it('503 twice then accepted: the action completes after 3 attempts, the others untouched', async () => {
    const job = webhookJob('quote', 'approved');
    h.sandbox.api.failNext({
      path: `/quotes/${String(job.event.quote_id)}/price-lock`,
      status: 503,
      times: 2,
      retryAfter: 0,
    });
    await h.enqueue(job);
    const outcome = await h.finished(job.webhook_id);
    const byName = Object.fromEntries(outcome.actions.map((action) => [action.name, action]));
    // Completed: the 503s of the earlier tries no longer describe it.
    expect(byName.lock_price).toMatchObject({ state: 'completed', attempts: 3, last_error: null });
    expect(byName.notify_customer).toMatchObject({ state: 'completed', attempts: 1 });
    expect(byName.update_sales_opportunity).toMatchObject({ state: 'completed', attempts: 1 });
    expect(outcome.state).toBe('completed');
  });

  it('a 400 fails the action at once, with the reason recorded', async () => {
    const job = webhookJob('quote', 'sent');
    h.sandbox.api.failNext({
      path: `/customers/${String(job.event.customer_id)}/notifications`,
      status: 400,
      body: { error: 'unknown customer' },
    });
    await h.enqueue(job);
    const outcome = await h.finished(job.webhook_id);
    const failed = outcome.actions.find((action) => action.name === 'notify_customer');
    expect(failed).toMatchObject({ state: 'failed', attempts: 1 });
    expect(failed?.last_error).toContain('400');
    expect(failed?.last_error).toContain('unknown customer');
    expect(outcome.state).toBe('failed');
    expect(
      h.sandbox.api.callsFor(`/customers/${String(job.event.customer_id)}/notifications`),
    ).toHaveLength(1);
  });

  it('a 401 causes exactly one new token and one retry', async () => {
    const job = webhookJob('sales', 'lost');
    // Warm the token first so the count below is only the renewal.
    const warm = webhookJob('sales', 'lost');
    await h.enqueue(warm);
    await h.finished(warm.webhook_id);
    const before = h.sandbox.idp.tokenRequests;
    h.sandbox.api.failNext({
      path: `/crm/opportunities/${String(job.event.sales_id)}`,
      status: 401,
    });
    await h.enqueue(job);
    const outcome = await h.finished(job.webhook_id);
    expect(outcome.actions[0]).toMatchObject({
      name: 'update_crm',
      state: 'completed',
      attempts: 1,
    });
    expect(h.sandbox.idp.tokenRequests - before).toBe(1);
    const calls = h.sandbox.api.callsFor(`/crm/opportunities/${String(job.event.sales_id)}`);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.headers.authorization).not.toBe(calls[1]!.headers.authorization);
  });
});

describe('ACTIONS_CONFIG', () => {
  it('routes a market to its own realm and API, and applies per-action overrides', async () => {
    const asia = await startSandbox({
      realm: 'staging-asia',
      clientId: 'pw-asia',
      clientSecret: 'asia-secret',
    });
    const config = actionsConfigSchema.parse({
      actions: { update_crm: { method: 'POST', path: '/v2/crm/{sales_id}' } },
      markets: {
        ASIA: { realm: 'staging-asia', client_id: 'pw-asia', client_secret_env: 'UNUSED_HERE' },
      },
    });
    const harness = await startWorkerHarness({
      actionsConfig: config,
      byMarket: {
        asia: {
          baseUrl: asia.env.API_BASE_URL,
          credentials: {
            authUrl: asia.env.AUTH_URL,
            realm: 'staging-asia',
            clientId: 'pw-asia',
            clientSecret: 'asia-secret',
          },
        },
      },
    });
    try {
      const asian = webhookJob('sales', 'lost');
      asian.event.metadata = { market: 'asia' };
      const european = webhookJob('sales', 'lost');
      await harness.enqueue(asian);
      await harness.enqueue(european);
      expect((await harness.finished(asian.webhook_id)).state).toBe('completed');
      expect((await harness.finished(european.webhook_id)).state).toBe('completed');
      const [asianCall] = asia.api.callsFor(`/v2/crm/${String(asian.event.sales_id)}`);
      expect(asianCall?.method).toBe('POST');
      expect(await asia.idp.isIssued(asianCall!.headers.authorization!.slice(7))).toBe(true);
      expect(
        harness.sandbox.api.callsFor(`/v2/crm/${String(european.event.sales_id)}`),
      ).toHaveLength(1);
      expect(asia.api.callsFor(`/v2/crm/${String(european.event.sales_id)}`)).toHaveLength(0);
    } finally {
      await harness.close();
      await asia.stop();
    }
  });

  it('an action disabled after the ingress chose it makes no call and is recorded as skipped: disabled', async () => {
    const harness = await startWorkerHarness({
      actionsConfig: actionsConfigSchema.parse({
        actions: { update_sales_opportunity: { enabled: false } },
      }),
    });
    try {
      const job = webhookJob('quote', 'sent');
      expect(job.actions).toEqual(['notify_customer', 'update_sales_opportunity']);
      await harness.enqueue(job);
      const outcome = await harness.finished(job.webhook_id);
      // The record lists every action of the ack, and says why one made no call.
      expect(outcome.state).toBe('completed');
      expect(outcome.actions.map((a) => [a.name, a.state, a.attempts, a.skipped])).toEqual([
        ['notify_customer', 'completed', 1, null],
        ['update_sales_opportunity', 'completed', 0, 'disabled'],
      ]);
      expect(
        harness.sandbox.api.calls.map((call) => (call.body as { action: string }).action),
      ).toEqual(['notify_customer']);
    } finally {
      await harness.close();
    }
  });
});

describe('out-of-order deliveries', () => {
  const actionsCalled = (webhookId: string) =>
    callsOf(webhookId).map((call) => (call.body as { action: string }).action);

  it('an event older than the last one taken in for its entity runs no state-changing action', async () => {
    const now = Date.now();
    const newer = webhookJob('contract', 'suspended', { id: 'ord-1', now: new Date(now) });
    const older = webhookJob('contract', 'active', { id: 'ord-1', now: new Date(now - 60_000) });
    await h.enqueue(newer);
    expect((await h.finished(newer.webhook_id)).stale).toBe(false);
    await h.enqueue(older);
    const outcome = await h.finished(older.webhook_id);
    expect(outcome).toMatchObject({ state: 'completed', stale: true });
    // Documents and the welcome message record what happened; activation and billing would undo
    // the newer status, so they make no call.
    expect(actionsCalled(older.webhook_id).sort()).toEqual([
      'generate_documents',
      'send_welcome_message',
    ]);
    const byName = Object.fromEntries(outcome.actions.map((a) => [a.name, a]));
    for (const name of ['activate_service', 'start_billing']) {
      expect(byName[name]).toMatchObject({ state: 'completed', skipped: 'stale', attempts: 0 });
    }
    expect(byName.generate_documents).toMatchObject({ skipped: null, attempts: 1 });
    // Another entity is not affected by this one's history.
    const other = webhookJob('contract', 'active', { id: 'ord-2', now: new Date(now - 60_000) });
    await h.enqueue(other);
    expect(await h.finished(other.webhook_id)).toMatchObject({ state: 'completed', stale: false });
    expect(actionsCalled(other.webhook_id)).toHaveLength(4);
  });

  it("an event dated ahead of the receiver's clock does not make its entity's next event stale", async () => {
    const now = Date.now();
    // Dated 200 s ahead (within MAX_CLOCK_SKEW_SECONDS): it counts as taken in when it was.
    const ahead = webhookJob('quote', 'sent', { id: 'ord-5', now: new Date(now + 200_000) });
    await h.enqueue(ahead);
    expect((await h.finished(ahead.webhook_id)).stale).toBe(false);
    const next = webhookJob('quote', 'approved', { id: 'ord-5', now: new Date(now + 1000) });
    await h.enqueue(next);
    const outcome = await h.finished(next.webhook_id);
    expect(outcome.stale).toBe(false);
    expect(outcome.actions.find((a) => a.name === 'lock_price')).toMatchObject({
      state: 'completed',
      skipped: null,
      attempts: 1,
    });
    expect(actionsCalled(next.webhook_id)).toContain('lock_price');
  });
});

describe('out-of-order deliveries, on a worker with its own action settings', () => {
  it('an action still retrying when a newer event arrives is skipped at its next try', async () => {
    const harness = await startWorkerHarness({
      actionsConfig: actionsConfigSchema.parse({
        actions: { lock_price: { backoff: { type: 'fixed', delay_ms: 1500 } } },
      }),
    });
    try {
      const now = Date.now();
      const older = webhookJob('quote', 'approved', { id: 'ord-3', now: new Date(now - 1000) });
      const newer = webhookJob('quote', 'rejected', { id: 'ord-3', now: new Date(now) });
      harness.sandbox.api.failNext({ path: '/quotes/Q-ord-3/price-lock', status: 503 });
      await harness.enqueue(older);
      await harness.until(older.webhook_id, (o) =>
        o.actions.some((a) => a.name === 'lock_price' && a.state === 'retrying'),
      );
      await harness.enqueue(newer);
      await harness.finished(newer.webhook_id);
      const outcome = await harness.finished(older.webhook_id);
      expect(outcome.stale).toBe(true);
      expect(outcome.actions.find((a) => a.name === 'lock_price')).toMatchObject({
        state: 'completed',
        skipped: 'stale',
        attempts: 1,
      });
      // The one price-lock call is the failed first try.
      expect(harness.sandbox.api.callsFor('/quotes/Q-ord-3/price-lock')).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });

  it('skip_when_stale in ACTIONS_CONFIG decides per action', async () => {
    const harness = await startWorkerHarness({
      actionsConfig: actionsConfigSchema.parse({
        actions: {
          activate_service: { skip_when_stale: false },
          send_welcome_message: { skip_when_stale: true },
        },
      }),
    });
    try {
      const now = Date.now();
      const newer = webhookJob('contract', 'suspended', { id: 'ord-4', now: new Date(now) });
      const older = webhookJob('contract', 'active', { id: 'ord-4', now: new Date(now - 1) });
      await harness.enqueue(newer);
      await harness.finished(newer.webhook_id);
      await harness.enqueue(older);
      const outcome = await harness.finished(older.webhook_id);
      const skipped = outcome.actions.filter((a) => a.skipped === 'stale').map((a) => a.name);
      expect(skipped.sort()).toEqual(['send_welcome_message', 'start_billing']);
    } finally {
      await harness.close();
    }
  });
});

describe('per-action limits (ACTIONS_CONFIG)', () => {
  it('max_concurrent: never more calls of the action in flight, other actions unaffected', async () => {
    const harness = await startWorkerHarness({
      actionsConfig: actionsConfigSchema.parse({
        actions: { notify_customer: { max_concurrent: 2 } },
      }),
    });
    try {
      const notifications = harness.sandbox.api.hold(/\/notifications$/);
      const jobs = Array.from({ length: 8 }, () => webhookJob('quote', 'sent'));
      for (const job of jobs) await harness.enqueue(job);
      await notifications.held(2);
      // Every other action of the eight webhooks completes while two notifications hang...
      for (const job of jobs) {
        await harness.until(job.webhook_id, (o) =>
          o.actions.some((a) => a.name === 'update_sales_opportunity' && a.state === 'completed'),
        );
      }
      // ...and no third notification has started.
      expect(notifications.holding()).toBe(2);
      notifications.release();
      for (const job of jobs) {
        expect((await harness.finished(job.webhook_id)).state).toBe('completed');
      }
      const calls = harness.sandbox.api.callsFor(/\/notifications$/);
      expect(calls).toHaveLength(8);
      expect(maxOverlap(calls)).toBe(2);
      expect(
        Number(
          (await harness.metrics.registry.getSingleMetric('actions_throttled_total')?.get())
            ?.values[0]?.value ?? 0,
        ),
      ).toBeGreaterThan(0);
    } finally {
      await harness.close();
    }
  });

  it('rate_limit: no more than `max` calls start in any `duration_ms`, and all complete', async () => {
    const harness = await startWorkerHarness({
      actionsConfig: actionsConfigSchema.parse({
        actions: { update_crm: { rate_limit: { max: 3, duration_ms: 1000 } } },
      }),
    });
    try {
      const jobs = Array.from({ length: 7 }, () => webhookJob('sales', 'negotiation'));
      for (const job of jobs) await harness.enqueue(job);
      for (const job of jobs) {
        expect((await harness.finished(job.webhook_id)).state).toBe('completed');
      }
      const starts = harness.sandbox.api
        .callsFor(/^\/crm\/opportunities\//)
        .map((call) => call.received_at.getTime())
        .sort((a, b) => a - b);
      expect(starts).toHaveLength(7);
      // The fourth call after any call arrives about a window later. Arrival at the partner API
      // adds each call's trip from Redis, whose clock grants the slots, and a loaded machine
      // stretches that trip; so the margin here is wide, and action-limits.test.ts checks the
      // exact window on Redis's clock.
      for (let i = 0; i + 3 < starts.length; i++) {
        expect(starts[i + 3]! - starts[i]!).toBeGreaterThan(500);
      }
    } finally {
      await harness.close();
    }
  });
});

/** The most calls that were being answered at one moment. */
function maxOverlap(calls: { received_at: Date; at: Date }[]): number {
  const edges = calls.flatMap((call) => [
    { t: call.received_at.getTime(), d: 1 },
    { t: call.at.getTime(), d: -1 },
  ]);
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let current = 0;
  let most = 0;
  for (const edge of edges) {
    current += edge.d;
    most = Math.max(most, current);
  }
  return most;
}
