// The console's trends page in a headless Chromium whose clock the test sets: both charts' time
// axes lie within the last hour of that clock, the waiting chart's too when it has one reading
// time (uPlot would stretch such an axis on by 1,000 days); no console error or CSP violation.
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser } from './console-browser.js';
import type { ConsoleInBrowser } from './console-browser.js';
import { webhookOf } from './harness.js';

const HOUR_MS = 3_600_000;

let browsing: ConsoleInBrowser;

beforeAll(async () => {
  browsing = await startConsoleInBrowser();
}, 60_000);
afterAll(() => browsing?.close());

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
    // A webhook taken in whose action job no worker takes: the waiting chart has a value to draw.
    await browsing.h.intake.add(
      webhookOf('wh_TTTTTTTTTTTTTTTTTTTTTT', 'quote.status_changed', ['notify_customer']),
    );
    const problems: string[] = [];
    const page = await browsing.newPage(problems);
    // The page's clock stands still at the test's: every reading it takes has this one time.
    const now = Date.now();
    await page.clock.setFixedTime(now);
    await page.goto(browsing.url('#/trends'));

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
    await page.context().close();
  }, 60_000);
});
