// The console's circuits page in a headless Chromium over circuits written as the breaker writes
// them: why each is open in words, a recovering one, the poison inputs counted and the newest
// listed, each a link to its webhook's page; no console error or CSP violation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuitKeys } from '@pw/shared/circuits';
import { publishSenderClocks, SenderClocks } from '@pw/shared/intake';
import { actionJobId } from '@pw/shared/queue';
import { startConsoleInBrowser } from './console-browser.js';
import type { ConsoleInBrowser } from './console-browser.js';
import { webhookOf } from './harness.js';

const FAILING = 'http://127.0.0.1:4010 partner/partner-webhooks';
const REOPENED = 'http://127.0.0.1:4020 partner-reopened/partner-webhooks';
const RECOVERING = 'http://127.0.0.1:4030 partner-recovering/partner-webhooks';
const BY_HAND = 'http://127.0.0.1:4040 partner-held/partner-webhooks';
/** The newest poison input's webhook, taken in so that its page has something to show. */
const NEWEST = 'wh_PPPPPPPPPPPPPPPPPPPPPP';

let browsing: ConsoleInBrowser;

/** A circuit's hash fields and its poison inputs (job ids, ms judged), as the breaker writes them. */
async function seedCircuit(
  target: string,
  fields: Record<string, string | number>,
  poison: [string, number][] = [],
): Promise<void> {
  const { h } = browsing;
  const keys = circuitKeys(h.prefix, target);
  const transaction = h.redis.multi().sadd(keys.targets, target).hset(keys.circuit, fields);
  for (const [jobId, at] of poison) transaction.zadd(keys.poison, at, jobId);
  await transaction.exec();
}

beforeAll(async () => {
  browsing = await startConsoleInBrowser();
  const now = Date.now();
  const probe = now + 600_000;
  await seedCircuit(FAILING, {
    state: 'open',
    reason: 'failures',
    failures: 10,
    since: now,
    next_probe_at: probe,
  });
  const poison = Array.from({ length: 24 }, (_, i): [string, number] => [
    actionJobId(`wh_${String(i).padStart(22, 'q')}`, 'lock_price'),
    now - 60_000 + i,
  ]);
  poison.push([actionJobId(NEWEST, 'notify_customer'), now]);
  await seedCircuit(
    REOPENED,
    { state: 'open', reason: 'reopened', failures: 1, since: now, next_probe_at: probe },
    poison,
  );
  await seedCircuit(RECOVERING, { state: 'closed', recovering: 1, failures: 0, since: now });
  await seedCircuit(BY_HAND, { state: 'open', reason: 'manual', manual: 1, since: now });
  await browsing.h.intake.add(webhookOf(NEWEST, 'quote.status_changed', ['notify_customer']));
}, 60_000);
afterAll(() => browsing?.close());

describe('the console’s circuits page', () => {
  it('says why each circuit is open, marks a recovering one, and lists the newest poison inputs', async () => {
    const problems: string[] = [];
    const page = await browsing.open('#/circuits', problems);
    const row = (target: string) => page.getByRole('row').filter({ hasText: target });

    await expect
      .poll(() => row(FAILING).textContent())
      .toContain('10 retryable failures in a row across inputs');
    expect(await row(REOPENED).textContent()).toContain(
      'reopened: a call failed right after a close',
    );
    expect(await row(BY_HAND).textContent()).toContain('opened by an operator');
    expect(await row(RECOVERING).locator('.badge').allTextContents()).toEqual([
      'closed',
      'recovering',
    ]);
    expect(await row(REOPENED).locator('td.poison-count').textContent()).toBe('25');
    expect(await row(FAILING).locator('td.poison-count').textContent()).toBe('0');

    // Only the circuit with poison inputs has a list: the newest 20 of its 25.
    const lists = page.locator('section.poison');
    expect(await lists.count()).toBe(1);
    const list = lists.first();
    expect(await list.getByRole('heading').textContent()).toBe(`Poison inputs of ${REOPENED}`);
    expect(await list.textContent()).toContain(
      '25 inputs the partner failed with a retryable status while it served others; the newest 20.',
    );
    expect(await list.locator('tbody tr').count()).toBe(20);
    const [first] = await list.locator('tbody tr').first().locator('td').allTextContents();
    expect(first).toBe(NEWEST);
    expect(await list.getByRole('link', { name: 'notify_customer' }).getAttribute('href')).toBe(
      '#/dead-letters?action=notify_customer',
    );

    // Each webhook is a link to its page.
    await list.getByRole('link', { name: NEWEST }).click();
    await page.getByRole('heading', { name: `Webhook ${NEWEST}` }).waitFor();
    await page.getByText('quote.status_changed').first().waitFor();
    expect(page.url()).toMatch(new RegExp(`#/webhooks/${NEWEST}$`));
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('shows each sender’s clock as the ingress estimates it', async () => {
    const clocks = new SenderClocks();
    const now = Date.now();
    // One sender 120 s ahead, one 3.2 s behind: what the ingress learns from their events.
    for (let i = 0; i < 3; i++) clocks.orderTime('partner-ahead', now + 120_000, now);
    for (let i = 0; i < 3; i++) clocks.orderTime('partner-behind', now - 3200, now);
    await publishSenderClocks(browsing.h.redis, browsing.h.prefix, clocks);
    const problems: string[] = [];
    const page = await browsing.open('#/circuits', problems);
    const table = page.getByRole('table', { name: 'Sender clocks' });
    const row = (sender: string) => table.getByRole('row').filter({ hasText: sender });
    await expect.poll(() => row('partner-ahead').textContent()).toContain('120.0 s ahead');
    expect(await row('partner-behind').textContent()).toContain('3.2 s behind');
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});
