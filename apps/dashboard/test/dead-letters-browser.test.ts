// The console's dead letters page in a headless Chromium, over more than one page of real failed
// jobs: it shows a page, follows "Older dead letters" to the end, and counts a dry run over every
// page; no console error or CSP violation on the way.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'bullmq';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionJobData } from '@pw/shared';
import { launchChromium } from '@pw/test-utils';
import { buildConsole } from '../build-console.js';
import { AUTH, failedActions, standInWorker, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let folder: string;
let h: DashboardHarness;
let server: Server;
let browser: Browser;
let worker: Worker<ActionJobData>;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'pw-console-'));
  await buildConsole(join(folder, 'console'));
  h = startDashboard({ consoleDir: join(folder, 'console') });
  worker = standInWorker(h, new Set(), 20);
  server = createServer(h.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  browser = await launchChromium();
  await failedActions(
    h,
    Array.from({ length: 230 }, (_, i) => ({
      webhook_id: `wh_${String(i).padStart(22, 'd')}`,
      ...(i % 2 === 0
        ? ({ action: 'lock_price', event_type: 'quote.status_changed' } as const)
        : ({ action: 'update_crm', event_type: 'sales_opportunity.status_changed' } as const)),
    })),
  );
}, 60_000);
afterAll(async () => {
  await browser?.close();
  server?.close();
  await worker?.close();
  await h?.close();
  await rm(folder, { recursive: true, force: true });
});

/** The console at `hash`, signed in; console errors and CSP violations go to `problems`. */
async function open(hash: string, problems: string[]): Promise<Page> {
  const context = await browser.newContext({
    httpCredentials: { username: AUTH.user, password: AUTH.password },
  });
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI);
    });`,
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await page.goto(`${base}/${hash}`);
  return page;
}

/** The webhook ids the page's table lists. */
const listed = (page: Page) => page.locator('table tbody tr td:first-child').allTextContents();

describe('the console’s dead letters page', () => {
  it('pages through every dead letter with "Older dead letters", and a dry run counts them all', async () => {
    const problems: string[] = [];
    const page = await open('#/dead-letters', problems);
    const seen: string[] = [];
    for (const [count, later] of [
      [100, ''],
      [100, ' (a later page)'],
      [30, ' (a later page)'],
    ] as const) {
      await page.getByText(`${count} dead letters, newest first${later}.`).waitFor();
      const ids = await listed(page);
      expect(ids).toHaveLength(count);
      seen.push(...ids);
      const older = page.getByRole('link', { name: 'Older dead letters' });
      if (count === 30) expect(await older.count()).toBe(0);
      else await older.click();
    }
    expect(new Set(seen).size).toBe(230);

    await page.getByRole('button', { name: 'Count the dead letters to replay' }).click();
    await page.getByRole('button', { name: 'Replay 230 actions…' }).waitFor();

    const locks = await open('#/dead-letters?action=lock_price', problems);
    await locks.getByText('100 dead letters, newest first.').waitFor();
    await locks.getByRole('link', { name: 'Older dead letters' }).click();
    await locks.getByText('15 dead letters, newest first (a later page).').waitFor();
    expect(problems).toEqual([]);
  }, 60_000);
});
