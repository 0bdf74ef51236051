// Listing dead letters a page at a time, through the API against real BullMQ failed jobs: every
// dead letter exactly once while new ones arrive, filters that page too, and a page that reads
// from Redis only what it answers (watched with MONITOR on the test's own keys).
import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionJobData } from '@pw/shared/queue';

import { failedActions, standInWorker, startDashboard, watchCommands } from './harness.js';
import type { DashboardHarness, DeadLetterSpec } from './harness.js';

let h: DashboardHarness;
let worker: Worker<ActionJobData>;
beforeAll(() => {
  h = startDashboard();
  worker = standInWorker(h, new Set(), 20);
});
afterAll(async () => {
  await worker.close();
  await h.close();
});

/** `count` dead letters named `<tag>NNN`, cycling through three actions of two event types. */
const letters = (tag: string, count: number): DeadLetterSpec[] =>
  Array.from({ length: count }, (_, i) => ({
    webhook_id: `wh_${tag}${String(i).padStart(22 - tag.length, '0')}`,
    ...(
      [
        { action: 'lock_price', event_type: 'quote.status_changed' },
        { action: 'notify_customer', event_type: 'quote.status_changed' },
        { action: 'update_crm', event_type: 'sales_opportunity.status_changed' },
      ] as const
    )[i % 3]!,
  }));

interface Page {
  dead_letters: { webhook_id: string; action: string; event_type: string; failed_at: string }[];
  next_cursor: string | null;
}

/** Every page of `path` (a query string included), following `next_cursor`. */
async function allPages(path: string, between?: () => Promise<void>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const response = await h.as('get', cursor ? `${path}${separator}cursor=${cursor}` : path);
    expect(response.status).toBe(200);
    const page = response.body as Page;
    pages.push(page);
    cursor = page.next_cursor;
    await between?.();
  } while (cursor);
  return pages;
}

const key = (letter: { webhook_id: string; action: string }) =>
  `${letter.webhook_id}.${letter.action}`;

// The describes below run in this order over the dead letters the first test makes.
describe('GET /api/dead-letters, a page at a time', () => {
  it('answers every dead letter exactly once, newest first, in pages of limit, while new dead letters arrive', async () => {
    await failedActions(h, letters('page', 250));
    const first = await h.as('get', '/api/dead-letters');
    expect((first.body as Page).dead_letters).toHaveLength(100);
    expect((first.body as Page).next_cursor).toEqual(expect.any(String));

    let arrivals = 0;
    const pages = await allPages('/api/dead-letters?limit=90', async () => {
      if (arrivals < 2) await failedActions(h, letters(`new${arrivals++}`, 15));
    });
    expect(pages.map((page) => page.dead_letters.length)).toEqual([90, 90, 70]);
    const listed = pages.flatMap((page) => page.dead_letters);
    expect(new Set(listed.map(key)).size).toBe(250);
    expect(listed.every((letter) => letter.webhook_id.startsWith('wh_page'))).toBe(true);
    const times = listed.map((letter) => Date.parse(letter.failed_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The arrivals are on the first page now.
    const now = await allPages('/api/dead-letters?limit=500');
    expect(now.map((page) => page.dead_letters.length)).toEqual([280]);
    expect(now[0]!.dead_letters.slice(0, 30).every((l) => l.webhook_id.startsWith('wh_new'))).toBe(
      true,
    );
  });

  it('pages a filter by action or event type over only the dead letters it matches', async () => {
    const locks = (await allPages('/api/dead-letters?action=lock_price&limit=40')).flatMap(
      (page) => page.dead_letters,
    );
    expect(locks).toHaveLength(84 + 10);
    expect(new Set(locks.map((letter) => letter.action))).toEqual(new Set(['lock_price']));
    expect(new Set(locks.map(key)).size).toBe(locks.length);
    const sales = (
      await allPages('/api/dead-letters?event_type=sales_opportunity.status_changed&limit=50')
    ).flatMap((page) => page.dead_letters);
    expect(sales).toHaveLength(83 + 10);
    expect(new Set(sales.map((letter) => letter.action))).toEqual(new Set(['update_crm']));
    for (const path of [
      '/api/dead-letters?action=lock_price&event_type=sales_opportunity.status_changed',
      '/api/dead-letters?action=no_such_action',
      '/api/dead-letters?event_type=invoice.paid',
    ]) {
      expect((await h.as('get', path)).body, path).toEqual({ dead_letters: [], next_cursor: null });
    }
  });
});

describe('GET /api/dead-letters: what it refuses, what it reads from Redis', () => {
  it('refuses a limit or cursor it cannot use with 400 invalid_query at its field', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('[-1,"x"]').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from('{"a":1}').toString('base64url')}`, 'cursor'],
    ] as const) {
      const response = await h.as('get', `/api/dead-letters?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body, query).toMatchObject({
        error: { code: 'invalid_query', details: [{ path: field }] },
      });
    }
    expect((await h.as('get', '/api/dead-letters?limit=500')).status).toBe(200);
  });

  it('reads from Redis only what a page answers: limit + 1 ids and limit jobs; filtered, ids in bounded reads', async () => {
    const seen = await watchCommands(h, async () => {
      await h.as('get', '/api/dead-letters?limit=20');
    });
    expect(jobReads(seen)).toBe(20);
    expect(idsAsked(seen)).toBe(21);

    const filtered = await watchCommands(h, async () => {
      await h.as('get', '/api/dead-letters?action=lock_price&limit=20');
    });
    expect(jobReads(filtered)).toBe(20);
    expect(idsAsked(filtered)).toBeLessThanOrEqual(10_000);
  });
});

describe("a dry run of the dead letters' replay", () => {
  it('counts a dry run over every page, and lists its first 100', async () => {
    const all = await h.as('post', '/api/dead-letters/replay?dry_run=true');
    expect(all.body).toMatchObject({ would_replay: 280 });
    expect((all.body as { dead_letters: unknown[] }).dead_letters).toHaveLength(100);
    const locks = await h.as('post', '/api/dead-letters/replay').send({
      dry_run: true,
      action: 'lock_price',
    });
    expect(locks.body).toMatchObject({ would_replay: 94 });
    expect((locks.body as { dead_letters: unknown[] }).dead_letters).toHaveLength(94);
  });
});

/** Reads of a whole job hash (BullMQ's `getJob`). */
const jobReads = (seen: string[][]) =>
  seen.filter(([command, jobKey]) => command?.toLowerCase() === 'hgetall' && jobKey?.includes('.'))
    .length;

/** Ids asked of the failed set: the `LIMIT` counts of its reads (a read without one: Infinity). */
const idsAsked = (seen: string[][]) =>
  seen
    .filter(
      ([command, setKey]) => command?.toLowerCase() === 'zrange' && setKey?.endsWith(':failed'),
    )
    .reduce((total, args) => {
      const limit = args.findIndex((arg) => arg.toUpperCase() === 'LIMIT');
      if (limit >= 0) return total + Number(args[limit + 2]);
      // A read of one millisecond's ties (the same score twice) is no scan.
      return args[2] === args[3] ? total : Infinity;
    }, 0);
