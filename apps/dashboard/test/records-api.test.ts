// The record store's routes of the operator API: their refusals, and what they answer without a
// store. (What they find is tested end to end in tests/e2e/test/records.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStore } from '@pw/records';
import type { RecordChange } from '@pw/records';
import { NUL_PROBLEM } from '@pw/shared/events';
import { keys } from '@pw/shared/queue';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { testSchema } from '@pw/test-utils';
import type { TestSchema } from '@pw/test-utils';
import { EVENT_BYTES_AT_ONCE } from '../src/quarantine.js';
import { failedAction, standInWorker, startDashboard, webhookOf } from './harness.js';
import type { DashboardHarness } from './harness.js';

let schema: TestSchema;
let store: RecordStore;
let h: DashboardHarness;
let bare: DashboardHarness;
beforeAll(async () => {
  schema = await testSchema();
  store = await RecordStore.open({ databaseUrl: schema.databaseUrl, schema: schema.schema });
  h = startDashboard({ records: store });
  bare = startDashboard();
});
afterAll(async () => {
  await Promise.all([h.close(), bare.close()]);
  await store.close();
  await schema.drop();
});

/** A webhook as the worker opens its record in Redis: one action, waiting. */
const queuedWebhook = (webhookId: string) =>
  webhookOf(webhookId, 'quote.status_changed', ['notify_customer']);

/** The store's record of a webhook whose one action failed for good. */
function failedForGood(webhookId: string, receivedAt: string): RecordChange[] {
  const failed = {
    name: 'notify_customer',
    state: 'failed' as const,
    attempts: 8,
    last_error: 'http_400: POST /x answered 400',
    completed_at: null,
    skipped: null,
    held: null,
  };
  return [
    {
      kind: 'webhook',
      seq: 1n,
      at: receivedAt,
      webhook: {
        webhook_id: webhookId,
        event_type: 'quote.status_changed',
        entity_id: 'Q-restore',
        customer_id: 'C-restore',
        received_at: receivedAt,
        actions: ['notify_customer'],
        event: { quote_id: 'Q-restore' },
      },
    },
    {
      kind: 'outcome',
      seq: 2n,
      at: receivedAt,
      attempt: null,
      outcome: {
        webhook_id: webhookId,
        event_type: 'quote.status_changed',
        entity_id: 'Q-restore',
        received_at: receivedAt,
        state: 'failed',
        stale: false,
        actions: [failed],
      },
    },
  ];
}

/** `path` is refused 400 `invalid_query`, a detail at `field` among the problems. */
async function expectInvalidQuery(path: string, field: string) {
  const response = await h.as('get', path);
  expect(response.status, path).toBe(400);
  const { error } = response.body as { error: { code: string; details: { path: string }[] } };
  expect(error.code, path).toBe('invalid_query');
  expect(
    error.details.some((detail) => detail.path === field),
    path,
  ).toBe(true);
}

describe('search, audit log and ledger', () => {
  it('answer from the store: an empty store, empty pages and a balanced empty ledger', async () => {
    const search = await h.as('get', '/api/webhooks?customer_id=C-1');
    expect(search.status).toBe(200);
    expect(search.body).toEqual({ webhooks: [], next_cursor: null });
    expect((await h.as('get', '/api/audit')).body).toEqual({ entries: [], next_cursor: null });
    const ledger = await h.as(
      'get',
      '/api/ledger?from=2026-11-23T10:00:00Z&to=2026-11-23T11:00:00Z',
    );
    expect(ledger.body).toMatchObject({ accepted: 0, in_flight: 0, balanced: true });
  });

  it('refuse a query they cannot read with 400 invalid_query, at its fields', async () => {
    for (const [path, field] of [
      ['/api/webhooks?state=lost', 'state'],
      ['/api/webhooks?limit=501', 'limit'],
      ['/api/webhooks?from=yesterday', 'from'],
      ['/api/webhooks?cursor=not-a-cursor', 'cursor'],
      ['/api/webhooks?entity_id=Q-1&surprise=1', ''],
      ['/api/webhooks?q=%20', 'q'],
      ['/api/audit?cursor=%FF%FE', 'cursor'],
      ['/api/ledger?from=2026-11-23T10:00:00Z', 'to'],
      ['/api/ledger?from=2026-11-23T10:00:00Z&to=2026-11-23T09:00:00Z', 'to'],
      ['/api/webhooks?from=0000-01-01T00:00:00Z', 'from'],
      ['/api/dead-letters?from=yesterday', 'from'],
    ] as const) {
      await expectInvalidQuery(path, field);
    }
  });

  it('refuse a value PostgreSQL cannot use with 400 invalid_query at its field, never 500', async () => {
    for (const [path, field] of [
      // Widened to whole minutes, this `to` would be in year 10000.
      ['/api/ledger?from=2026-11-23T10:00:00Z&to=9999-12-31T23:59:30Z', 'to'],
      ['/api/webhooks?to=9999-12-31T23:59:59-05:00', 'to'],
      ['/api/webhooks?from=0001-01-01T00:00:00%2B01:00', 'from'],
      ['/api/webhooks?q=Q%00', 'q'],
      ['/api/webhooks?customer_id=C%00', 'customer_id'],
    ] as const) {
      const response = await h.as('get', path);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toMatchObject({
        error: { code: 'invalid_query', details: [{ path: field }] },
      });
    }
    // The store's own refusal of a value that passed the checks (a NUL inside a cursor).
    const cursor = Buffer.from(JSON.stringify(['2026-11-23T10:00:00.000Z', 'wh_\u0000'])).toString(
      'base64url',
    );
    const refused = await h.as('get', `/api/webhooks?cursor=${cursor}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'invalid_query' } });
    // The last whole minute PostgreSQL holds.
    const last = await h.as('get', '/api/ledger?from=9999-12-31T23:00:00Z&to=9999-12-31T23:59:00Z');
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ to: '9999-12-31T23:59:00.000Z', balanced: true });
  });

  it('answer 503 store_unavailable without a store, and other routes still work', async () => {
    for (const path of ['/api/webhooks', '/api/audit', '/api/ledger?from=a&to=b']) {
      const response = await bare.as('get', path);
      expect(response.status, path).toBe(503);
      expect((response.body as { error: { code: string } }).error.code).toBe('store_unavailable');
    }
    expect((await bare.as('get', '/api/rules')).status).toBe(200);
    expect((await bare.as('get', '/api/nothing-here')).status).toBe(404);
  });
});

describe('the quarantine list', () => {
  it('answers a page from the store, refuses a query it cannot read, and 503 without a store', async () => {
    expect((await h.as('get', '/api/quarantine')).body).toEqual({
      quarantined: [],
      next_cursor: null,
    });
    for (const [path, field] of [
      ['/api/quarantine?state=failed', ''],
      ['/api/quarantine?limit=0', 'limit'],
      ['/api/quarantine?from=yesterday', 'from'],
    ] as const) {
      await expectInvalidQuery(path, field);
    }
    const away = await bare.as('get', '/api/quarantine');
    expect(away.status).toBe(503);
    expect((away.body as { error: { code: string } }).error.code).toBe('store_unavailable');
  });
});

/** A refusal's status and error code. */
const refusal = (response: { status: number; body: unknown }) => [
  response.status,
  (response.body as { error: { code: string } }).error.code,
];

/**
 * The store's record of a quarantined quote (its event one the running schema accepts), as the
 * recorder writes it; `change` alters what it was kept with.
 */
function quarantinedQuote(
  webhookId: string,
  change: Partial<Pick<AcceptedWebhook, 'entity_id' | 'event' | 'problems' | 'received_at'>> = {},
): RecordChange[] {
  const webhook = webhookOf(webhookId, 'quote.status_changed', []);
  return [
    {
      kind: 'webhook',
      seq: 1n,
      at: webhook.received_at,
      webhook: {
        ...webhook,
        customer_id: null,
        problems: [{ path: 'product.price_with_taxes', message: 'Invalid input' }],
        ...change,
      },
    },
  ];
}

const release = (webhookId: string) => h.as('post', `/api/quarantine/${webhookId}/release`);

describe("the quarantine's changes", () => {
  it('refuses what it cannot act on: 404 for an id the store has not, 409 for a webhook not quarantined, 400 for a filter or a discard without reason, 503 without a store', async () => {
    const unknown = await h.as('post', '/api/quarantine/wh_unknown000000000000000/release');
    expect(refusal(unknown)).toEqual([404, 'not_found']);
    const malformed = await h.as('post', '/api/quarantine/..%2Fmeta/release');
    expect(malformed.status).toBe(404);

    // Kept, then discarded: the store no longer lists it as quarantined.
    const failedId = 'wh_notkept000000000000000';
    const [kept] = quarantinedQuote(failedId);
    const webhook = kept?.kind === 'webhook' ? kept.webhook : undefined;
    await store.writeBatch([
      kept!,
      {
        kind: 'outcome',
        seq: 2n,
        at: new Date().toISOString(),
        attempt: null,
        outcome: { ...webhook!, state: 'discarded', stale: false, actions: [] },
      },
    ]);
    for (const path of [`${failedId}/release`, `${failedId}/discard`]) {
      const refused = await h.as('post', `/api/quarantine/${path}`).send({ reason: 'test' });
      expect(refusal(refused), path).toEqual([409, 'not_quarantined']);
    }
    const noReason = await h.as('post', `/api/quarantine/${failedId}/discard`).send({});
    expect(refusal(noReason)).toEqual([400, 'invalid_request']);
    const badFilter = await h.as('post', '/api/quarantine/release?from=yesterday');
    expect(refusal(badFilter)).toEqual([400, 'invalid_query']);
    const dry = await h.as('post', '/api/quarantine/release?dry_run=true&event_type=nothing.here');
    expect(dry.body).toEqual({ would_release: 0, still_invalid: 0, quarantined: [] });

    for (const path of ['wh_unknown000000000000000/release', 'release?dry_run=true']) {
      const away = await bare.as('post', `/api/quarantine/${path}`);
      expect(refusal(away), path).toEqual([503, 'store_unavailable']);
    }
  });
});

describe('a dry run of a bulk release', () => {
  it('reads the kept events a few megabytes at a time, and counts with the check a release makes', async () => {
    // The store as the dashboard reads it, each read of events weighed.
    const reads: number[] = [];
    const weighed: RecordStore = Object.create(store) as RecordStore;
    weighed.quarantinedEvents = async (ids) => {
      const events = await store.quarantinedEvents(ids);
      reads.push(
        [...events.values()].reduce((sum, kept) => sum + JSON.stringify(kept.event).length, 0),
      );
      return events;
    };
    const dashboard = startDashboard({ records: weighed });
    try {
      const at = (i: number) => new Date(Date.UTC(2021, 2, 3, 4, 5, i)).toISOString();
      const notes = 'n'.repeat(400_000);
      for (let i = 0; i < 12; i++) {
        const heavy = quarantinedQuote(`wh_heavy${String(i).padStart(17, '0')}`, {
          received_at: at(i),
        });
        const change = heavy[0]!;
        if (change.kind === 'webhook') change.webhook.event = { ...change.webhook.event, notes };
        await store.writeBatch(heavy);
      }
      const nul = 'wh_heavynul00000000000000';
      const nulProblem = { path: 'customer_id', message: NUL_PROBLEM };
      // Its U+0000 is its eleventh problem: past the summary's ten, judged all the same.
      const others = Array.from({ length: 10 }, (_, i) => ({ path: `f${i}`, message: 'Invalid' }));
      await store.writeBatch(
        quarantinedQuote(nul, { problems: [...others, nulProblem], received_at: at(30) }),
      );
      const window = `from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(31))}`;
      const dry = await dashboard.as('post', `/api/quarantine/release?${window}&dry_run=true`);
      expect(dry.status).toBe(200);
      const preview = dry.body as {
        would_release: number;
        still_invalid: number;
        quarantined: { webhook_id: string; releasable: boolean }[];
      };
      // The U+0000 one is not counted as releasable: a release refuses it (the test above).
      expect(preview).toMatchObject({ would_release: 12, still_invalid: 1 });
      expect(preview.quarantined.find((kept) => kept.webhook_id === nul)?.releasable).toBe(false);
      expect(JSON.stringify(preview).length).toBeLessThan(20_000);
      // 4.8 MB of events, read in runs of at most EVENT_BYTES_AT_ONCE.
      expect(reads.length).toBeGreaterThanOrEqual(3);
      for (const bytes of reads) expect(bytes).toBeLessThanOrEqual(EVENT_BYTES_AT_ONCE);
      expect(refusal(await release(nul))).toEqual([409, 'still_invalid']);
    } finally {
      await dashboard.close();
    }
  });
});

describe("the quarantine's changes, Redis and the store apart", () => {
  it('a webhook released once is not released again when the store lags and Redis has dropped its record', async () => {
    const webhookId = 'wh_releasedtwice000000000';
    await store.writeBatch(quarantinedQuote(webhookId));
    const first = await release(webhookId);
    expect(first.status).toBe(202);
    // No recorder here: the store still says quarantined. Redis drops the record (its time is up).
    await h.redis.del(keys.outcome(h.prefix, webhookId));
    const before = await h.actions.getJobCounts();
    expect(refusal(await release(webhookId))).toEqual([409, 'not_quarantined']);
    const discard = h.as('post', `/api/quarantine/${webhookId}/discard`).send({ reason: 'x' });
    expect(refusal(await discard)).toEqual([409, 'not_quarantined']);
    expect(await h.redis.exists(keys.outcome(h.prefix, webhookId))).toBe(0);
    expect(await h.actions.getJobCounts()).toEqual(before);
  });

  it('an event that held U+0000, or whose entity id did not read when it arrived, is not released: 409 still_invalid, saying why', async () => {
    const nul = 'wh_heldnul000000000000000';
    const nulProblem = { path: 'customer_id', message: NUL_PROBLEM };
    // The store keeps U+FFFD in its place: its copy passes the schema, but is not what was sent.
    await store.writeBatch(quarantinedQuote(nul, { problems: [nulProblem] }));
    const refused = await release(nul);
    expect(refusal(refused)).toEqual([409, 'still_invalid']);
    expect((refused.body as { error: { details: unknown[] } }).error.details).toEqual([nulProblem]);

    const apart = 'wh_keptapart0000000000000';
    await store.writeBatch(quarantinedQuote(apart, { entity_id: '' }));
    const kept = await release(apart);
    expect(refusal(kept)).toEqual([409, 'still_invalid']);
    expect((kept.body as { error: { details: { path: string }[] } }).error.details).toEqual([
      expect.objectContaining({ path: 'quote_id' }),
    ]);
    expect(await h.outcomes.get(apart)).toBeNull();
  });
});

describe('the out-of-order guard of a release', () => {
  it("a released event is stale when the store has a newer event of its entity that Redis no longer remembers, and the worker's check is told so", async () => {
    const webhookId = 'wh_olderthanstore00000000';
    const [kept] = quarantinedQuote(webhookId);
    const older = kept?.kind === 'webhook' ? kept.webhook : undefined;
    const olderMs = Date.parse(String(older!.event.timestamp));
    // A newer event of the same quote, received a minute later, stored; Redis's memory of it gone.
    const newerAt = new Date(olderMs + 60_000).toISOString();
    const newerEvent = { ...older!.event, timestamp: newerAt };
    const newer = 'wh_newerinstore000000000';
    await store.writeBatch([
      kept!,
      {
        kind: 'webhook',
        seq: 2n,
        at: older!.received_at,
        webhook: {
          ...older!,
          webhook_id: newer,
          event: newerEvent,
          received_at: newerAt,
          problems: undefined,
        },
      },
    ]);
    const latest = `${h.prefix}:latest:quote.status_changed:${older!.entity_id}`;
    expect(await h.redis.exists(latest)).toBe(0);
    expect((await release(webhookId)).status).toBe(202);
    expect(await h.outcomes.get(webhookId)).toMatchObject({ stale: true, state: 'queued' });
    expect(Number(await h.redis.get(latest))).toBe(olderMs + 60_000);
  });

  it('a webhook the store still lists as quarantined but Redis has released meanwhile is not released again: 409, no job added', async () => {
    const webhookId = 'wh_releasedmeanwhile00000';
    await store.writeBatch(quarantinedQuote(webhookId));
    // Redis's record: an ordinary webhook already (as after another operator's release).
    await h.intake.add(webhookOf(webhookId, 'quote.status_changed', []));
    const before = await h.actions.getJobCounts();
    const discarded = await h.as('post', `/api/quarantine/${webhookId}/discard`).send({
      reason: 'a test',
    });
    expect(refusal(discarded)).toEqual([409, 'not_quarantined']);
    const released = await h.as('post', `/api/quarantine/${webhookId}/release`);
    expect(released.status).toBe(409);
    expect(await h.actions.getJobCounts()).toEqual(before);
  });
});

describe('webhooks and replays, the store lagging or away', () => {
  it('a bulk replay with a filter it cannot read is refused, nothing replayed; a dry run in a JSON body works', async () => {
    const bad = await h.as('post', '/api/dead-letters/replay').send({ from: 'yesterday' });
    expect(bad.status).toBe(400);
    const dry = await h.as('post', '/api/dead-letters/replay').send({ dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ would_replay: 0, dead_letters: [] });
  });

  it('a webhook Redis holds is answered, without history, while the store does not answer', async () => {
    const broken = startDashboard({
      records: {
        webhook: () => Promise.reject(new Error('connection refused')),
        search: () => Promise.reject(new Error('connection refused')),
        audit: () => Promise.reject(new Error('connection refused')),
        ledger: () => Promise.reject(new Error('connection refused')),
        quarantined: () => Promise.reject(new Error('connection refused')),
        quarantineSummaries: () => Promise.reject(new Error('connection refused')),
        quarantinedEvents: () => Promise.reject(new Error('connection refused')),
        newestEventTime: () => Promise.reject(new Error('connection refused')),
      },
    });
    try {
      const data = queuedWebhook('wh_storeaway0000000000000');
      await broken.intake.add(data);
      const response = await broken.as('get', `/api/webhooks/${data.webhook_id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        webhook_id: data.webhook_id,
        state: 'queued',
        actions: [{ name: 'notify_customer', history: [] }],
      });
    } finally {
      await broken.close();
    }
  });

  it('a webhook the store has not received yet is answered from Redis, its trace id null until it has', async () => {
    const data = queuedWebhook('wh_notstoredyet0000000000');
    await h.intake.add(data);
    const response = await h.as('get', `/api/webhooks/${data.webhook_id}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ webhook_id: data.webhook_id, state: 'queued' });
    expect(response.body).toHaveProperty('trace_id', null);
  });

  it('a dead letter whose record Redis no longer holds is replayed with its record put back from the store', async () => {
    const webhookId = 'wh_restore000000000000000';
    const receivedAt = new Date().toISOString();
    await store.writeBatch(failedForGood(webhookId, receivedAt));
    // The console's one box: the same webhook by its id, its entity id or its customer id.
    for (const q of [webhookId, 'Q-restore', 'C-restore']) {
      const found = await h.as('get', `/api/webhooks?q=${q}`);
      expect(found.body, q).toMatchObject({ webhooks: [{ webhook_id: webhookId }] });
    }
    const worker = standInWorker(h, new Set());
    try {
      await failedAction(h, webhookId);
      expect(await h.outcomes.get(webhookId)).toBeNull();
      const replay = await h.as('post', `/api/webhooks/${webhookId}/replay`);
      expect(replay.status).toBe(202);
      expect(replay.body).toEqual({ webhook_id: webhookId, replayed: ['notify_customer'] });
      expect(await h.outcomes.get(webhookId)).toMatchObject({
        webhook_id: webhookId,
        entity_id: 'Q-restore',
        received_at: receivedAt,
        actions: [{ name: 'notify_customer', attempts: 8 }],
      });
    } finally {
      await worker.close();
    }
  });
});
