// The console in a headless Chromium, for the browser tests of its pages: the console built into
// a folder of its own, a dashboard serving it on a port, and the browser.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, watchedPage } from '@pw/test-utils';
import { buildConsole } from '../build-console.js';
import { AUTH, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

export interface ConsoleInBrowser {
  h: DashboardHarness;
  /**
   * A new page, signed in, not yet on the console; its console errors and CSP violations go to
   * `problems`.
   */
  newPage(problems: string[]): Promise<Page>;
  /** The console's address at `hash` (`#/trends`). */
  url(hash: string): string;
  /** The console at `hash`, on a new page (`newPage`). */
  open(hash: string, problems: string[]): Promise<Page>;
  close(): Promise<void>;
}

export async function startConsoleInBrowser(): Promise<ConsoleInBrowser> {
  const folder = await mkdtemp(join(tmpdir(), 'pw-console-'));
  await buildConsole(join(folder, 'console'));
  const h = startDashboard({ consoleDir: join(folder, 'console') });
  const server = createServer(h.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const browser = await launchChromium();
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const newPage = (problems: string[]) =>
    watchedPage(
      browser,
      { httpCredentials: { username: AUTH.user, password: AUTH.password } },
      problems,
    );
  const url = (hash: string) => `${base}/${hash}`;
  return {
    h,
    newPage,
    url,
    async open(hash, problems) {
      const page = await newPage(problems);
      await page.goto(url(hash));
      return page;
    },
    async close() {
      await browser.close();
      server.close();
      await h.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
