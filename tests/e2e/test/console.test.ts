// The operator console in Debian's Chromium against npm start's real apps: an operator reads a
// quarantined event, tries to release it and discards it, finds a webhook by its customer,
// watches a failed action's replay complete, replays dead letters after a dry-run count, fixes a
// rule the API refused, opens a circuit by hand, reads the trends and the audit log. Every page is checked for console errors and CSP violations, and photographed into
// docs/console/ for the README.
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { DEFAULT_RULES } from '@pw/shared/rules';
import { signEvent } from '@pw/shared/signing';
import type { Acknowledgement } from '@pw/shared/events';
import { launchChromium } from '@pw/test-utils';
import { docsPicture } from './pictures.js';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

const SCREENSHOTS = fileURLToPath(new URL('../../../docs/console/', import.meta.url));
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let system: RunningSystem;
let browser: Browser;
let context: BrowserContext;
/** Console errors, page errors and CSP violations of the current test's pages, with their URL. */
let problems: string[] = [];

/** Takes out the one problem a test expects (an API refusal the page shows): it must be there. */
function expectProblem(pattern: RegExp): void {
  const index = problems.findIndex((problem) => pattern.test(problem));
  expect(index, `${pattern} among ${JSON.stringify(problems)}`).toBeGreaterThanOrEqual(0);
  problems.splice(index, 1);
}

beforeAll(async () => {
  [system, browser] = await Promise.all([
    startSystem({
      ACTION_ATTEMPTS: '3',
      ACTION_BACKOFF: 'fixed',
      ACTION_BACKOFF_DELAY_MS: '20',
      CIRCUIT_FAILURE_THRESHOLD: '1000',
      // A call the sandbox holds in flight (an action waiting its turn) outlasts a slow page.
      API_TIMEOUT_MS: '30000',
    }),
    launchChromium(),
  ]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await system?.stop();
});
afterEach(async () => {
  await context?.close();
  expect(problems).toEqual([]);
  problems = [];
});

/** A page of the console, as the operator signed in, watched for errors and CSP violations. */
async function open(hash: string, viewport = LAPTOP): Promise<Page> {
  await context?.close();
  context = await browser.newContext({
    viewport,
    httpCredentials: { username: 'operator', password: 'e2e-dashboard-password' },
  });
  // Chromium reports a CSP violation as an event on the document: turned into a console error.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI);
    });`,
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`${message.text()} ${message.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${system.url.dashboard}/${hash}`);
  return page;
}

/** The page as docs/console/<name>.png, titled by its heading, ids left out (pictures.ts). */
const photograph = async (page: Page, name: string) => {
  const heading = await page.locator('h1').first().innerText();
  await docsPicture(page, `${SCREENSHOTS}${name}.png`, heading.replace(/\bwh_[\w-]+/g, 'wh_*'));
};

const fail = (spec: { status: number; pathPattern: string; times: number }) =>
  fetch(`${system.url.api}/__sandbox/failures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });

async function post(event: Record<string, unknown>): Promise<Acknowledgement> {
  const answer = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signEvent(event, DEV_WEBHOOK_SECRET)),
  });
  return acknowledgementSchema.parse(await answer.json());
}

/** Posts an approved quote whose price lock the partner refuses 3 times: a dead letter. */
async function deadLetter(id: string): Promise<string> {
  expect((await fail({ status: 503, pathPattern: '/price-lock', times: 3 })).status).toBe(201);
  const ack = await post(sampleEvent('quote', { id, status: 'approved' }));
  await system.outcome(ack.webhook_id, (outcome) => outcome.state === 'failed');
  return ack.webhook_id;
}

let replayedWebhook = '';

// The describes below run in this order on one system: the audit log at the end lists what the
// tests before it did.
describe('the operator console: quarantine', { timeout: 90_000 }, () => {
  let quarantined = '';

  it('shows a quarantined webhook (npm run send -- contract --invalid customer_id) with its problems and the event as received', async () => {
    const sent = await system.send('contract', '--invalid', 'customer_id');
    expect(sent.code, sent.output).toBe(0);
    const ack = acknowledgementSchema.parse(sent.lines[0]);
    expect(ack.quarantined).toBe(true);
    quarantined = ack.webhook_id;
    await system.poll<{ webhooks: unknown[] }>(
      `/api/webhooks?state=quarantined&q=${ack.webhook_id}`,
      (body) => body.webhooks.length === 1,
    );
    const page = await open(`#/webhooks/${ack.webhook_id}`);
    await page.getByRole('heading', { name: 'Problems' }).waitFor();
    await expect.poll(() => page.locator('ul.problems').textContent()).toContain('customer_id');
    await expect
      .poll(() => page.locator('pre.event').textContent())
      .toContain('"customer_id": true');
    await page.getByRole('button', { name: 'Release', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Discard…' }).waitFor();
    // A quarantined webhook ran no action: no empty "Actions" heading.
    expect(await page.getByRole('heading', { name: 'Actions' }).count()).toBe(0);
    await photograph(page, 'quarantined');
  });

  it('lists it on the quarantine page, summed up; a release finds it still invalid under the running schema', async () => {
    const page = await open('#/quarantine');
    const item = page.getByRole('article', { name: `Quarantined webhook ${quarantined}` });
    await item.waitFor();
    expect(await item.getByRole('link', { name: quarantined }).getAttribute('href')).toBe(
      `#/webhooks/${quarantined}`,
    );
    expect(await item.locator('ul.problems').textContent()).toContain('customer_id');
    // A summary: the event's size, and a link to the event on the webhook's page.
    expect(await item.locator('pre.event').count()).toBe(0);
    expect(await item.getByText(/^\d+ bytes$/).count()).toBe(1);
    expect(
      await item.getByRole('link', { name: /The event as received/ }).getAttribute('href'),
    ).toBe(`#/webhooks/${quarantined}`);

    await item.getByRole('button', { name: 'Release', exact: true }).click();
    await item.getByRole('button', { name: 'Release it' }).click();
    const refusal = item.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Still invalid under the running schema');
    expect(await refusal.locator('ul.problems').textContent()).toContain('customer_id');
    expectProblem(/status of 409 .*\/release$/);

    await page.getByRole('button', { name: 'Count the quarantined webhooks to release' }).click();
    await page.getByText('Nothing to release for these filters.').waitFor();
    await photograph(page, 'quarantine');
  });

  it('discards it with a reason: it leaves the list', async () => {
    const page = await open('#/quarantine');
    const item = page.getByRole('article', { name: `Quarantined webhook ${quarantined}` });
    await item.getByRole('button', { name: 'Discard…' }).click();
    const discard = item.getByRole('button', { name: 'Discard', exact: true });
    expect(await discard.isDisabled()).toBe(true);
    await item.getByLabel('Why discard it?').fill('a test event: customer_id was never a boolean');
    await discard.click();
    await page.getByRole('status').filter({ hasText: 'Discarded.' }).waitFor();
    await expect.poll(() => item.count()).toBe(0);
    // The page leaves it out at once; the record store, which the list is read from, soon after.
    await system.poll<{ webhooks: unknown[] }>(
      `/api/webhooks?state=discarded&q=${quarantined}`,
      (body) => body.webhooks.length === 1,
    );
    const again = await open('#/quarantine');
    await again.getByText('Nothing quarantined matches.').waitFor();
  });
});

describe('the operator console: finding webhooks', { timeout: 90_000 }, () => {
  it('finds one of the quotes a newcomer sent with npm run send -- quote --count 20, by the id send printed', async () => {
    const sent = await system.send('quote', '--count', '20');
    expect(sent.code).toBe(0);
    const quotes = [...sent.output.matchAll(/^sent quote (Q-\S+) \(customer C-\S+\): 200$/gm)];
    expect(quotes).toHaveLength(20);
    const quoteId = quotes[7]?.[1] ?? '';
    await system.poll<{ webhooks: unknown[] }>(
      `/api/webhooks?entity_id=${quoteId}`,
      (body) => body.webhooks.length === 1,
    );
    const page = await open('');
    const box = page.getByRole('searchbox');
    await box.fill(quoteId);
    await box.press('Enter');
    const row = page.getByRole('row').filter({ hasText: quoteId });
    await row.waitFor();
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: /^Webhook wh_/ }).waitFor();
    await expect.poll(() => page.locator('pre.event').textContent()).toContain(quoteId);
  });

  it('finds a webhook by its customer id, shows the failed action’s three attempts, replays it and shows it complete', async () => {
    const webhookId = await deadLetter('console-1');
    replayedWebhook = webhookId;
    // The record store is written a moment after Redis: the search waits for it.
    await system.poll<{ webhooks: unknown[] }>(
      '/api/webhooks?customer_id=C-console-1',
      (body) => body.webhooks.length === 1,
    );
    const page = await open('');
    const box = page.getByLabel('Webhook id, quote / contract / sales id, or customer id');
    await box.fill('C-console-1');
    await box.press('Enter');
    await page.getByRole('link', { name: webhookId }).waitFor();
    expect(page.url()).toContain('q=C-console-1');
    await photograph(page, 'search');

    await page.getByRole('link', { name: webhookId }).click();
    const lock = page.getByRole('article', { name: 'Action lock_price' });
    const attempts = lock.locator('table.timeline tbody tr');
    await expect.poll(() => attempts.count(), { timeout: 15_000 }).toBe(3);
    for (const row of await attempts.all()) {
      await expect.poll(() => row.textContent()).toContain('503');
    }
    await expect.poll(() => lock.locator('.badge').first().textContent()).toBe('failed');
    await expect.poll(() => page.locator('pre.event').textContent()).toContain('"quote_id"');
    expect(await page.locator('pre.event').textContent()).not.toContain('signature');
    expect(await lock.textContent()).toContain(`${webhookId}:lock_price`);
    await photograph(page, 'webhook');

    await page.getByRole('button', { name: 'Replay failed actions (1)' }).click();
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Replayed: lock_price' }).waitFor();
    // The page refreshes itself: the fourth call completes the action.
    await expect
      .poll(() => lock.locator('.badge').first().textContent(), { timeout: 15_000 })
      .toBe('completed');
    await expect.poll(() => attempts.count(), { timeout: 15_000 }).toBe(4);
    expect(await attempts.nth(3).textContent()).toContain('200');
    // On a phone: the same search, readable without sideways scrolling of the page itself.
    const phone = await open('#/?q=C-console-1', PHONE);
    await phone.getByRole('link', { name: webhookId }).waitFor();
    const width = await phone.evaluate<number>('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(PHONE.width);
    await photograph(phone, 'search-phone');
  });
});

describe('the operator console: dead letters and rules', { timeout: 90_000 }, () => {
  it('counts the dead letters in a dry run, then replays them', async () => {
    const ids = [await deadLetter('console-2'), await deadLetter('console-3')];
    const page = await open('#/dead-letters?action=lock_price');
    for (const id of ids) await page.getByRole('link', { name: id }).waitFor();
    await page.getByRole('button', { name: 'Count the dead letters to replay' }).click();
    await page.getByRole('button', { name: 'Replay 2 actions…' }).click();
    await photograph(page, 'dead-letters');
    await page.getByRole('button', { name: 'Replay them' }).click();
    await page.getByRole('status').filter({ hasText: 'Replayed 2 actions' }).waitFor();
    for (const id of ids) {
      await system.outcome(id, (outcome) => outcome.state === 'completed');
    }
  });

  it('shows a refused rule’s error at its path, previews and saves the fixed rules; the next webhook follows them', async () => {
    const page = await open('#/rules');
    const rules = page.getByLabel('Rules (JSON)');
    await expect.poll(() => rules.inputValue()).toContain('notify_customer');
    await rules.fill(
      JSON.stringify([{ event_type: 'quote.status_changed', action: 'start_billing' }]),
    );
    await page.getByRole('button', { name: 'Validate and save' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('0.action');
    expectProblem(/status of 400 .*\/api\/rules$/);

    await rules.fill(
      JSON.stringify([{ event_type: 'quote.status_changed', action: 'notify_customer' }]),
    );
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('status').filter({ hasText: 'Would run: notify_customer' }).waitFor();
    await photograph(page, 'rules');
    await page.getByRole('button', { name: 'Validate and save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);

    // The ingress takes rules changes within a second (published through Redis).
    await expect
      .poll(
        async () =>
          (await post(sampleEvent('quote', { status: 'approved' }))).actions_triggered.join(),
        { timeout: 10_000 },
      )
      .toBe('notify_customer');
    await putDefaultRules();
  });
});

/** The sandbox partner's holds (`/__sandbox/holds`): calls left in flight until released. */
const holds = (method: string, body?: unknown) =>
  fetch(`${system.url.api}/__sandbox/holds`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('the operator console: an action waiting its turn', { timeout: 90_000 }, () => {
  it('shows the newer event’s opportunity update held: entity_busy while the older one’s call is in flight, then completed', async () => {
    const path = '/sales-opportunities/by-quote/QR-console-turn';
    expect((await holds('POST', { path })).status).toBe(201);
    const holding = async () =>
      ((await (await holds('GET')).json()) as { holding: number }).holding;
    const now = Date.now();
    await post(
      sampleEvent('quote', { id: 'console-turn', status: 'modified', now: new Date(now - 1000) }),
    );
    // The older event's update is with the partner: the newer one's waits its turn.
    await expect.poll(holding, { timeout: 15_000 }).toBe(1);
    const newer = await post(
      sampleEvent('quote', { id: 'console-turn', status: 'rejected', now: new Date(now) }),
    );
    await system.outcome(newer.webhook_id, (outcome) =>
      outcome.actions.some((action) => action.held === 'entity_busy'),
    );
    const page = await open(`#/webhooks/${newer.webhook_id}`);
    const update = page.getByRole('article', { name: 'Action update_sales_opportunity' });
    const badge = update.locator('.badge-held');
    await expect.poll(() => badge.textContent()).toBe('held: entity_busy');
    expect(await badge.getAttribute('title')).toContain(
      'a call of this action for the same entity is in flight',
    );
    expect(await update.locator('dd').first().textContent()).toBe('0');
    await photograph(page, 'webhook-waiting-turn');

    // The partner answers the older call: the newer one's takes its turn and completes.
    expect((await holds('DELETE')).status).toBe(200);
    await expect
      .poll(() => update.locator('.badge').first().textContent(), { timeout: 15_000 })
      .toBe('completed');
    expect(await badge.count()).toBe(0);
  });
});

describe('the operator console: circuits, trends and the audit log', { timeout: 90_000 }, () => {
  it('opens a circuit by hand: the next webhook’s actions are held until it is closed', async () => {
    const page = await open('#/circuits');
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.getByRole('button', { name: 'Open circuit' }).click();
    await expect.poll(() => page.locator('td .badge').first().textContent()).toBe('open');

    const ack = await post(sampleEvent('quote', { id: 'console-held', status: 'approved' }));
    await system.outcome(ack.webhook_id, (outcome) =>
      outcome.actions.some((action) => action.held === 'circuit_open'),
    );
    await expect
      .poll(() => page.locator('td.held-count').first().textContent(), { timeout: 10_000 })
      .not.toBe('0');
    await photograph(page, 'circuits');

    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByRole('button', { name: 'Close circuit' }).click();
    await system.outcome(ack.webhook_id, (outcome) => outcome.state === 'completed');
  });

  it('charts the last hour with data points after a burst of events', async () => {
    await Promise.all(Array.from({ length: 20 }, () => post(sampleEvent('quote'))));
    const page = await open('#/trends');
    const perMinute = page.getByRole('img', { name: 'Per minute' });
    await expect
      .poll(async () => Number(await perMinute.getAttribute('data-points')), { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(await perMinute.locator('canvas').count()).toBe(1);
    await photograph(page, 'trends');
  });

  it('lists the operator’s changes in the audit log', async () => {
    const page = await open('#/audit');
    const replay = page.getByRole('row').filter({ hasText: replayedWebhook });
    await replay.first().waitFor();
    expect(await replay.first().textContent()).toContain('operator');
    await page.getByRole('row').filter({ hasText: 'circuit_override' }).first().waitFor();
    await page.getByRole('row').filter({ hasText: 'rules_replaced' }).first().waitFor();
    await page.getByRole('row').filter({ hasText: 'quarantine_discard' }).first().waitFor();
    await photograph(page, 'audit');
  });
});

/** Puts the contract's rules back for the tests after. */
async function putDefaultRules(): Promise<void> {
  const answer = await system.dashboard('/api/rules', {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: DEFAULT_RULES }),
  });
  expect(answer.status).toBe(200);
}
