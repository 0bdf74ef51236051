// The console's trends page in a headless Chromium whose clock the test sets: both charts' time
// axes lie within the last hour of that clock, the waiting chart's too when it has one reading
// time (uPlot would stretch such an axis on by 1,000 days); no console error or CSP violation.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, plainWebhookJob } from '@pw/test-utils';
import { buildConsole } from '../build-console.js';
import { AUTH, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

const HOUR_MS = 3_600_000;

let folder: string;
let h: DashboardHarness;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'pw-console-'));
  await buildConsole(join(folder, 'console'));
  h = startDashboard({ consoleDir: join(folder, 'console') });
  server = createServer(h.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  server?.close();
  await h?.close();
  await rm(folder, { recursive: true, force: true });
});

/** The ends of a chart's time axis, in milliseconds, once it has drawn data. */
async function timeAxis(chart: Locator): Promise<{ from: number; to: number }> {
  await expect.poll(() => chart.getAttribute('data-to'), { timeout: 10_000 }).not.toBeNull();
  const [from, to] = await Promise.all(
    ['data-from', 'data-to'].map(async (name) => Date.parse((await chart.getAttribute(name))!)),
  );
  return { from: from!, to: to! };
}

describe('the console’s trends page', () => {
  it('draws both time axes within the last hour of the page’s clock, the first reading too', async () => {
    // A webhook job left waiting: the waiting chart has a value to draw.
    await h.webhooks.add('quote.status_changed', plainWebhookJob('wh_TTTTTTTTTTTTTTTTTTTTTT'));
    const context = await browser.newContext({
      httpCredentials: { username: AUTH.user, password: AUTH.password },
    });
    await context.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (event) => {
        console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI);
      });`,
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    // The page's clock stands still at the test's: every reading it takes has this one time.
    const now = Date.now();
    await page.clock.setFixedTime(now);
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/#/trends`);

    const perMinute = await timeAxis(page.getByRole('img', { name: 'Per minute' }));
    const waited = page.getByRole('img', { name: 'Seconds waited, since this page opened' });
    await expect
      .poll(async () => Number(await waited.getAttribute('data-points')))
      .toBeGreaterThan(0);
    const waiting = await timeAxis(waited);
    const end = Date.now();
    for (const [name, axis] of Object.entries({ perMinute, waiting })) {
      expect(axis.from, `${name} from ${new Date(axis.from).toISOString()}`).toBeGreaterThanOrEqual(
        now - HOUR_MS,
      );
      expect(axis.to, `${name} to ${new Date(axis.to).toISOString()}`).toBeLessThanOrEqual(end);
      expect(axis.from).toBeLessThan(axis.to);
    }
    // The one reading ends the axis, five minutes wide.
    expect(waiting).toEqual({ from: now - 300_000, to: now });
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
