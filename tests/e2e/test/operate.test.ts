// An operator's day: a delivery partly fails, the dashboard shows it (API and board), the cause
// is fixed, the failure is replayed; routing rules are changed live; the metrics add up.
import { mkdirSync } from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { launchChromium, repoRoot } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

const operator = { username: 'operator', password: 'e2e-dashboard-password' };
const basic = `Basic ${Buffer.from(`${operator.username}:${operator.password}`).toString('base64')}`;
let system: RunningSystem;
let failedWebhook: string;

beforeAll(async () => {
  system = await startSystem({
    DASHBOARD_USER: operator.username,
    DASHBOARD_PASSWORD: operator.password,
  });
});
afterAll(async () => {
  await system.stop();
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${system.url.dashboard}${path}`, {
    ...init,
    headers: { authorization: basic, 'content-type': 'application/json', ...init.headers },
  });

/** A headless Chromium logged in to the dashboard. */
async function withBrowser(use: (context: BrowserContext) => Promise<void>): Promise<void> {
  const browser = await launchChromium();
  try {
    await use(
      await browser.newContext({
        httpCredentials: operator,
        viewport: { width: 1280, height: 900 },
      }),
    );
  } finally {
    await browser.close();
  }
}

// The describes below run in this order on one system: the delivery that fails first is the one
// the board shows, the one replayed, and the one the metrics count.
describe('operating the system through the dashboard', () => {
  it('shows a partly failed delivery: which action failed and why', async () => {
    // The partner refuses commissions for now.
    await fetch(`${system.url.api}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        path: '/commissions',
        status: 422,
        times: 1000,
        body: { error: 'commission plan missing' },
      }),
    });
    const { lines } = await system.send('sales', '--status', 'converted', '--wait');
    failedWebhook = acknowledgementSchema.parse(lines[0]).webhook_id;
    const status = (await (await api(`/api/webhooks/${failedWebhook}`)).json()) as WebhookOutcome;
    expect(status.state).toBe('failed');
    const byName = Object.fromEntries(status.actions.map((action) => [action.name, action]));
    expect(byName.calculate_commission).toMatchObject({ state: 'failed', attempts: 1 });
    expect(byName.calculate_commission?.last_error).toContain('422');
    expect(byName.update_crm?.state).toBe('completed');
    expect(byName.update_metrics?.state).toBe('completed');
    expect((await fetch(`${system.url.dashboard}/api/webhooks/${failedWebhook}`)).status).toBe(401);
    expect((await api('/api/webhooks/wh_nothing_like_this')).status).toBe(404);
  });

  it('the board, in a real browser: log in, see the queues, open the failed job and read its error', async () => {
    await withBrowser(async (context) => {
      const page = await context.newPage();
      await page.goto(`${system.url.dashboard}/admin/queues`);
      await page.getByText('actions', { exact: true }).first().waitFor();
      await page.goto(`${system.url.dashboard}/admin/queues/queue/actions?status=failed`);
      await page.getByText('calculate_commission').first().waitFor();
      await page
        .getByText(/commission plan missing/)
        .first()
        .waitFor();
      mkdirSync(`${repoRoot}test-artifacts`, { recursive: true });
      await page.screenshot({
        path: `${repoRoot}test-artifacts/dashboard-failed-job.png`,
        fullPage: true,
      });
    });
  });
});

describe('operating the system: the API documentation', () => {
  it('the API documentation, in a real browser: every webhook endpoint with its signed examples', async () => {
    expect((await fetch(`${system.url.dashboard}/docs/`)).status).toBe(401);
    const served = (await (await api('/docs/openapi.json')).json()) as {
      paths: Record<string, unknown>;
    };
    const webhookPaths = Object.keys(served.paths).filter((path) => path.startsWith('/webhooks/'));
    expect(webhookPaths).toHaveLength(3);
    await withBrowser(async (context) => {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${system.url.dashboard}/docs`);
      expect(page.url()).toBe(`${system.url.dashboard}/docs/`);
      await page.getByText('partner-webhooks ingress').first().waitFor();
      for (const path of webhookPaths) await page.getByText(path, { exact: true }).waitFor();
      await page.getByText('/webhooks/quote-status', { exact: true }).click();
      await page
        .getByText(/"signature": "sha256=[0-9a-f]{64}"/)
        .first()
        .waitFor();
      await page.getByText('validation_failed').first().waitFor();
      mkdirSync(`${repoRoot}test-artifacts`, { recursive: true });
      await page.screenshot({ path: `${repoRoot}test-artifacts/api-docs.png`, fullPage: true });
      // A script or style the Content-Security-Policy blocked would show here.
      expect(problems).toEqual([]);
    });
  });
});

/** Commissions the ingress set off while the new rules were on their way (the metrics test). */
let commissionsBeforeTheRules = 0;

describe('operating the system: replay and live rules', () => {
  it('lists the dead letter, and replaying it once the cause is gone completes the delivery', async () => {
    const dead = (await (await api('/api/dead-letters?action=calculate_commission')).json()) as {
      dead_letters: { webhook_id: string }[];
    };
    expect(dead.dead_letters.map((d) => d.webhook_id)).toEqual([failedWebhook]);
    await fetch(`${system.url.api}/__sandbox/failures`, { method: 'DELETE' });
    const replay = await api(`/api/webhooks/${failedWebhook}/replay`, { method: 'POST' });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toEqual({
      webhook_id: failedWebhook,
      replayed: ['calculate_commission'],
    });
    const done = await system.outcome(failedWebhook, (outcome) => outcome.state === 'completed');
    expect(done.actions.find((a) => a.name === 'calculate_commission')).toMatchObject({
      state: 'completed',
      attempts: 2,
    });
    expect(
      ((await (await api('/api/dead-letters')).json()) as { dead_letters: unknown[] }).dead_letters,
    ).toEqual([]);
  });

  // Commissions set off by the loop below before its rules were live (the old rules ran).

  it('new routing rules take effect on the ingress within a second, without a restart', async () => {
    const refused = await api('/api/rules', {
      method: 'PUT',
      body: JSON.stringify({ rules: [{ event_type: 'nope' }] }),
    });
    expect(refused.status).toBe(400);
    const rules = [
      {
        event_type: 'sales_opportunity.status_changed',
        action: 'update_metrics',
        when: [{ path: 'metadata.campaign_source', equals: 'newsletter' }],
      },
    ];
    expect(
      (await api('/api/rules', { method: 'PUT', body: JSON.stringify({ rules }) })).status,
    ).toBe(200);
    const changedBy = Date.now() + 1000;
    let actions: string[];
    do {
      const event = signEvent(sampleEvent('sales', { status: 'converted' }), DEV_WEBHOOK_SECRET);
      const response = await fetch(`${system.url.ingress}/webhooks/sales-opportunity`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
      });
      actions = acknowledgementSchema.parse(await response.json()).actions_triggered;
      if (actions.includes('calculate_commission')) commissionsBeforeTheRules += 1;
    } while (actions.join() !== 'update_metrics' && Date.now() < changedBy);
    expect(actions).toEqual(['update_metrics']);
  });
});

describe('operating the system: metrics', () => {
  it('the metrics add up: accepted, completed and failed', async () => {
    const ingress = await (await fetch(`${system.url.ingress}/metrics`)).text();
    const accepted = [
      ...ingress.matchAll(
        /webhooks_received_total\{event_type="[^"]+",outcome="accepted"\} (\d+)/g,
      ),
    ].reduce((sum, m) => sum + Number(m[1]), 0);
    const sent = system.run.output.split('webhook accepted').length - 1;
    expect(accepted).toBe(sent);
    const worker = await (await fetch(`${system.url.worker}/metrics`)).text();
    expect(worker).toContain('actions_total{action="calculate_commission",outcome="failed"} 1');
    // The replayed one, and any the rules loop sent before its rules were live (once completed).
    await expect
      .poll(async () => await (await fetch(`${system.url.worker}/metrics`)).text())
      .toMatch(
        new RegExp(
          `actions_total\\{action="calculate_commission",outcome="completed"\\} ${1 + commissionsBeforeTheRules}\\b`,
        ),
      );
    // The dashboard's queue figures are read every 5 s, not on each request.
    await expect
      .poll(async () => (await fetch(`${system.url.dashboard}/metrics`)).text(), {
        timeout: 15_000,
      })
      .toContain('queue_jobs{queue="actions",state="failed"} 0');
  });
});
