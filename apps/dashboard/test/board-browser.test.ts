// bull-board's own UI with the board's allow-list, in a headless Chromium: a refused
// button (Duplicate, which adds a job) ends in a "Forbidden" toast and the page carries on; an
// allowed one (Retry) works from the page, passes the same-origin check as the browser sends it,
// and is audited with the operator's name.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'bullmq';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ActionJobData } from '@pw/shared/queue';
import { launchChromium } from '@pw/test-utils';
import { AUTH, failedAction, standInWorker, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
let server: Server;
let browser: Browser;
let worker: Worker<ActionJobData>;
/** Jobs the stand-in worker completes; it fails every other one for good. */
const passing = new Set<string>();

beforeAll(async () => {
  h = startDashboard();
  worker = standInWorker(h, passing);
  server = createServer(h.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  server?.close();
  await worker.close();
  await h.close();
});

describe('the queue board in a browser', () => {
  it(
    'shows a refused action as a Forbidden toast, and retries a failed job',
    { timeout: 60_000 },
    async () => {
      const webhookId = 'wh_GGGGGGGGGGGGGGGGGGGGGG';
      const id = await failedAction(h, webhookId);

      const context = await browser.newContext({
        httpCredentials: { username: AUTH.user, password: AUTH.password },
      });
      const page = await context.newPage();
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await page.goto(`${base}/admin/queues/queue/actions?status=failed`);
      // The job card's buttons, in bull-board 9.10.1's order: retry, duplicate, edit, clean.
      const card = page.locator('[class^="header-"]', { hasText: id });
      const [retry, duplicate] = [card.locator('button').nth(0), card.locator('button').nth(1)];

      await duplicate.click();
      await page.getByRole('dialog').getByRole('button', { name: 'Duplicate' }).click();
      await page.getByText('Forbidden', { exact: true }).waitFor();
      await page.getByText(/The queue board cannot create or edit jobs/).waitFor();
      expect(await h.actions.getJobCounts()).toMatchObject({ waiting: 0, failed: 1 });

      passing.add(id);
      await retry.click();
      await page.getByRole('button', { name: 'Confirm' }).click();
      await vi.waitFor(async () => expect(await h.actions.getJobState(id)).toBe('completed'), {
        timeout: 5000,
      });
      await vi.waitFor(() =>
        expect(h.logs).toContainEqual(
          expect.objectContaining({
            audit: true,
            msg: 'board action',
            action: 'retry_job',
            user: AUTH.user,
            job_id: id,
          }),
        ),
      );
      await context.close();
    },
  );
});
