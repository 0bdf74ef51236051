import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { actionsConfigSchema, QUEUE_NAMES } from '@pw/shared';
import { testRedisUrl } from '@pw/test-utils';
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
    expect(byName.lock_price).toMatchObject({ state: 'completed', attempts: 3 });
    expect(byName.lock_price?.last_error).toContain('503');
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

  it('a disabled action is not queued, even when the ingress chose it', async () => {
    const harness = await startWorkerHarness({
      actionsConfig: actionsConfigSchema.parse({
        actions: { update_sales_opportunity: { enabled: false } },
      }),
    });
    try {
      const job = webhookJob('quote', 'sent');
      expect(job.actions).toEqual(['notify_customer', 'update_sales_opportunity']);
      await harness.enqueue(job);
      expect((await harness.finished(job.webhook_id)).actions.map((a) => a.name)).toEqual([
        'notify_customer',
      ]);
      expect(
        harness.sandbox.api.calls.map((call) => (call.body as { action: string }).action),
      ).toEqual(['notify_customer']);
    } finally {
      await harness.close();
    }
  });
});

describe('the partner API down, then back', () => {
  it('actions wait with backoff and complete; nothing with attempts left reaches the dead letters', async () => {
    const harness = await startWorkerHarness({ attempts: 50 });
    try {
      await harness.sandbox.api.down();
      const jobs = [webhookJob('quote', 'approved'), webhookJob('contract', 'active')];
      for (const job of jobs) await harness.enqueue(job);
      // Every action has failed at least once against the closed port before the API returns.
      for (const job of jobs) {
        await harness.until(job.webhook_id, (o) => o.actions.every((a) => a.state === 'retrying'));
      }
      await harness.sandbox.api.up();
      for (const job of jobs) {
        const outcome = await harness.finished(job.webhook_id);
        expect(outcome.state).toBe('completed');
        expect(outcome.actions.every((a) => a.attempts >= 2)).toBe(true);
      }
      const actions = new Queue(QUEUE_NAMES.actions, {
        connection: { url: testRedisUrl() },
        prefix: harness.prefix,
      });
      expect(await actions.getFailedCount()).toBe(0);
      await actions.close();
    } finally {
      await harness.close();
    }
  });
});
