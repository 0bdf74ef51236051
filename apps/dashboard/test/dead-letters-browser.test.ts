// The console's dead letters page in a headless Chromium, over more than one page of real failed
// jobs: it shows a page, follows "Older dead letters" to the end, and counts a dry run over every
// page; no console error or CSP violation on the way.
import type { Worker } from 'bullmq';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionJobData } from '@pw/shared/queue';
import { startConsoleInBrowser } from './console-browser.js';
import type { ConsoleInBrowser } from './console-browser.js';
import { failedActions, standInWorker } from './harness.js';

let browsing: ConsoleInBrowser;
let worker: Worker<ActionJobData>;

beforeAll(async () => {
  browsing = await startConsoleInBrowser();
  worker = standInWorker(browsing.h, new Set(), 20);
  await failedActions(
    browsing.h,
    Array.from({ length: 230 }, (_, i) => ({
      webhook_id: `wh_${String(i).padStart(22, 'd')}`,
      ...(i % 2 === 0
        ? ({ action: 'lock_price', event_type: 'quote.status_changed' } as const)
        : ({ action: 'update_crm', event_type: 'sales_opportunity.status_changed' } as const)),
    })),
  );
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await browsing?.close();
});

/** The webhook ids the page's table lists. */
const listed = (page: Page) => page.locator('table tbody tr td:first-child').allTextContents();

describe('the console’s dead letters page', () => {
  it('pages through every dead letter with "Older dead letters", and a dry run counts them all', async () => {
    const problems: string[] = [];
    const page = await browsing.open('#/dead-letters', problems);
    const seen: string[] = [];
    for (const [count, later] of [
      [100, ''],
      [100, ' (a later page)'],
      [30, ' (a later page)'],
    ] as const) {
      await page.getByText(`${count} dead letters, newest first${later}.`).waitFor();
      // The rows may land a frame after the caption (a loaded CI machine showed the caption
      // over an empty table once).
      await expect.poll(async () => (await listed(page)).length).toBe(count);
      const ids = await listed(page);
      seen.push(...ids);
      const older = page.getByRole('link', { name: 'Older dead letters' });
      if (count === 30) expect(await older.count()).toBe(0);
      else await older.click();
    }
    expect(new Set(seen).size).toBe(230);

    await page.getByRole('button', { name: 'Count the dead letters to replay' }).click();
    await page.getByRole('button', { name: 'Replay 230 actions…' }).waitFor();

    const locks = await browsing.open('#/dead-letters?action=lock_price', problems);
    await locks.getByText('100 dead letters, newest first.').waitFor();
    await locks.getByRole('link', { name: 'Older dead letters' }).click();
    await locks.getByText('15 dead letters, newest first (a later page).').waitFor();
    expect(problems).toEqual([]);
  }, 60_000);
});
