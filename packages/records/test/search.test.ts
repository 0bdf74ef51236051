import { describe, expect } from 'vitest';
import type pg from 'pg';
import {
  INVALID_CURSOR,
  INVALID_TIME,
  actionsQuery,
  historyQuery,
  searchQuery,
} from '../src/index.js';
import type {
  Query,
  RecordChange,
  RecordStore,
  SearchFilter,
  WebhookSummary,
} from '../src/index.js';
import { accepted, action, outcome, webhookId } from './changes.js';
import { test } from './store-fixture.js';

const COUNT = 10_000;
const BASE = Date.parse('2025-03-01T00:00:00.000Z');
const EVENT_TYPES = [
  'quote.status_changed',
  'contract.status_changed',
  'sales_opportunity.status_changed',
];
const STATES = ['queued', 'processing', 'completed', 'failed'] as const;

interface Seeded {
  webhook_id: string;
  entity_id: string;
  customer_id: string | null;
  event_type: string;
  state: (typeof STATES)[number];
  received_at: string;
}

/** Webhook n: 500 entities, 97 customers (none for every tenth), four sharing each millisecond. */
function seeded(n: number): Seeded {
  return {
    webhook_id: webhookId(n),
    entity_id: `E-${n % 500}`,
    customer_id: n % 10 === 0 ? null : `C-${n % 97}`,
    event_type: EVENT_TYPES[n % 3] ?? '',
    state: STATES[n % 4] ?? 'queued',
    received_at: new Date(BASE + Math.floor(n / 4) * 1000).toISOString(),
  };
}

const ACTION_STATES = {
  queued: 'waiting',
  processing: 'active',
  completed: 'completed',
  failed: 'failed',
} as const;

function changesOf(webhook: Seeded, seq: bigint): RecordChange[] {
  const { state, ...record } = webhook;
  const changes = [accepted(seq, { ...record, actions: ['notify_crm', 'report'] })];
  if (state !== 'queued') {
    const actions = [
      action('notify_crm', { state: ACTION_STATES[state], attempts: 1 }),
      action('report', { state: 'completed' }),
    ];
    const attempt = {
      action: 'notify_crm',
      attempt: 1,
      started_at: webhook.received_at,
      finished_at: webhook.received_at,
      outcome: state === 'failed' ? ('failed' as const) : ('completed' as const),
      status: state === 'failed' ? 400 : 200,
      error: state === 'failed' ? 'refused' : null,
      duration_ms: 5,
    };
    changes.push(outcome(seq + 1n, webhook.received_at, { ...record, actions }, attempt));
  }
  return changes;
}

const ALL = Array.from({ length: COUNT }, (_, n) => seeded(n));

/** Ten thousand webhooks, written in batches of 500, in no particular order. */
async function seed(store: RecordStore): Promise<void> {
  const order = ALL.map((_, n) => (n * 7919) % COUNT);
  for (let start = 0; start < COUNT; start += 500) {
    const batch = order
      .slice(start, start + 500)
      .flatMap((n) => changesOf(ALL[n] as Seeded, BigInt(n * 2 + 1)));
    await store.writeBatch(batch);
  }
}

const newestFirst = (a: Seeded, b: Seeded) =>
  a.received_at === b.received_at
    ? a.webhook_id < b.webhook_id
      ? 1
      : -1
    : a.received_at < b.received_at
      ? 1
      : -1;

const expected = (match: (webhook: Seeded) => boolean) =>
  ALL.filter(match)
    .sort(newestFirst)
    .map((w) => w.webhook_id);

/** Every page of a search, following the cursors. */
async function allPages(store: RecordStore, filter: SearchFilter): Promise<WebhookSummary[][]> {
  const pages: WebhookSummary[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.search({ ...filter, cursor });
    pages.push(page.webhooks);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return pages;
}

const ids = (pages: WebhookSummary[][]) => pages.flat().map((webhook) => webhook.webhook_id);

/** The node types of a statement's plan. */
async function planNodes(db: pg.Pool, query: Query): Promise<string[]> {
  const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
    `explain (format json) ${query.text}`,
    query.values,
  );
  const nodes: string[] = [];
  const visit = (node: { 'Node Type': string; 'Relation Name'?: string; Plans?: unknown[] }) => {
    nodes.push(`${node['Node Type']} ${node['Relation Name'] ?? ''}`.trim());
    for (const child of node.Plans ?? []) visit(child as typeof node);
  };
  visit((rows[0]?.['QUERY PLAN'] as [{ Plan: Parameters<typeof visit>[0] }])[0].Plan);
  return nodes;
}

describe('search over ten thousand webhooks', () => {
  test('by entity_id and by customer_id finds exactly the right webhooks, newest first, each page once', async ({
    store,
  }) => {
    await seed(store);
    const entity = await allPages(store, { entity_id: 'E-7', limit: 7 });
    expect(ids(entity)).toEqual(expected((w) => w.entity_id === 'E-7'));
    expect(entity.map((page) => page.length)).toEqual([7, 7, 6]);
    const customer = await allPages(store, { customer_id: 'C-42', limit: 9 });
    const forCustomer = expected((w) => w.customer_id === 'C-42');
    expect(forCustomer.length).toBeGreaterThan(90);
    expect(ids(customer)).toEqual(forCustomer);
    expect(new Set(ids(customer)).size).toBe(forCustomer.length);
    const whole = await allPages(store, { limit: 500 });
    expect(ids(whole)).toEqual(expected(() => true));
  });

  test('q finds a webhook by its id, its entity id or its customer id, paged like the rest', async ({
    store,
  }) => {
    await seed(store);
    const byEntity = await allPages(store, { q: 'E-7', limit: 7 });
    expect(ids(byEntity)).toEqual(expected((w) => w.entity_id === 'E-7'));
    const byCustomer = await allPages(store, { q: 'C-42', event_type: EVENT_TYPES[0], limit: 9 });
    expect(ids(byCustomer)).toEqual(
      expected((w) => w.customer_id === 'C-42' && w.event_type === EVENT_TYPES[0]),
    );
    expect(ids(await allPages(store, { q: webhookId(1234) }))).toEqual([webhookId(1234)]);
    expect(ids(await allPages(store, { q: 'nobody' }))).toEqual([]);
  });

  test('filters combine, from inclusive and to exclusive', async ({ store }) => {
    await seed(store);
    const from = new Date(BASE + 100_000).toISOString();
    const to = new Date(BASE + 900_000).toISOString();
    const filter = { event_type: EVENT_TYPES[1], state: 'failed', from, to, limit: 50 };
    const pages = await allPages(store, filter);
    const match = (w: Seeded) =>
      w.event_type === EVENT_TYPES[1] &&
      w.state === 'failed' &&
      w.received_at >= from &&
      w.received_at < to;
    expect(ids(pages)).toEqual(expected(match));
    expect(pages.flat().some((w) => w.received_at === from)).toBe(true);
    expect(pages.flat().some((w) => w.received_at === to)).toBe(false);
    const first = pages[0]?.[0];
    expect(first).toMatchObject({
      state: 'failed',
      finished_at: first?.received_at,
      customer_id: expect.any(String) as string,
    });
    expect(first?.actions).toEqual([
      expect.objectContaining({ name: 'notify_crm', state: 'failed', attempts: 1 }),
      expect.objectContaining({ name: 'report', state: 'completed' }),
    ]);
    expect(first).not.toHaveProperty('event');
  });
});

describe('search plans over ten thousand webhooks', () => {
  test('the searches run on indexes, never scanning a table', async ({ store, db }) => {
    await seed(store);
    await db.query('analyze');
    const page = await store.search({ customer_id: 'C-3', limit: 5 });
    const filters: SearchFilter[] = [
      { entity_id: 'E-7' },
      { customer_id: 'C-42' },
      { customer_id: 'C-42', cursor: page.next_cursor ?? '' },
      { event_type: EVENT_TYPES[2], state: 'processing' },
      {
        state: 'queued',
        from: new Date(BASE).toISOString(),
        to: new Date(BASE + 3_600_000).toISOString(),
      },
      {},
      { limit: 500, cursor: page.next_cursor ?? '' },
      { q: 'E-7' },
      { q: 'C-42', state: 'completed', cursor: page.next_cursor ?? '' },
      { q: webhookId(1234) },
    ];
    const pageIds = page.webhooks.map((webhook) => webhook.webhook_id);
    const queries = [
      ...filters.map(searchQuery),
      actionsQuery(pageIds),
      historyQuery(pageIds[0] ?? ''),
    ];
    for (const query of queries) {
      const nodes = await planNodes(db, query);
      expect(
        nodes.filter((node) => node.startsWith('Seq Scan')),
        query.text,
      ).toEqual([]);
    }
  }, 60_000);
});

describe('search input', () => {
  test('a malformed cursor or time is refused with a code', async ({ store }) => {
    for (const cursor of [
      'nonsense',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["x","y"]').toString('base64url'),
    ]) {
      await expect(store.search({ cursor })).rejects.toMatchObject({ code: INVALID_CURSOR });
    }
    await expect(store.audit({ cursor: 'nonsense' })).rejects.toMatchObject({
      code: INVALID_CURSOR,
    });
    await expect(store.search({ from: 'yesterday' })).rejects.toMatchObject({ code: INVALID_TIME });
    await expect(store.search({ to: '2025-03-01T10:00:00' })).rejects.toMatchObject({
      code: INVALID_TIME,
    });
  });

  test('limit is 50 unless given, and at most 500', () => {
    expect(searchQuery({}).limit).toBe(50);
    expect(searchQuery({ limit: 10_000 }).limit).toBe(500);
    expect(searchQuery({ limit: 0 }).limit).toBe(1);
  });

  test('an empty store has an empty last page', async ({ store }) => {
    expect(await store.search({ entity_id: 'E-1' })).toEqual({ webhooks: [], next_cursor: null });
  });
});
