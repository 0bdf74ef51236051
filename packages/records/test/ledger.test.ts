import { expect } from 'vitest';
import { INVALID_TIME } from '../src/index.js';
import type { RecordChange, RecordStore } from '../src/index.js';
import { accepted, action, outcome, webhookId } from './changes.js';
import { test } from './store-fixture.js';

const minute = (m: number) => `2025-03-01T10:${String(m).padStart(2, '0')}:00.000Z`;

/** Webhooks received 10:00 to 10:04: 5 completed, 3 failed, 2 processing, 2 queued; 2 more at 10:05. */
async function seedWebhooks(store: RecordStore): Promise<void> {
  const states = [
    ...Array.from({ length: 5 }, () => 'completed' as const),
    ...Array.from({ length: 3 }, () => 'failed' as const),
    'active',
    'active',
    'waiting',
    'waiting',
    'completed',
    'failed',
  ] as const;
  const changes: RecordChange[] = states.flatMap((state, n) => {
    const received_at =
      n < 12 ? `2025-03-01T10:0${n % 5}:${String(10 + n).padStart(2, '0')}.000Z` : minute(5);
    const webhook_id = webhookId(n);
    return [
      accepted(BigInt(n * 2 + 1), { webhook_id, received_at }),
      outcome(BigInt(n * 2 + 2), received_at, {
        webhook_id,
        received_at,
        actions: [action('notify_crm', { state })],
      }),
    ];
  });
  await store.writeBatch(changes);
}

test('the ledger balances when every accepted webhook is recorded', async ({ store }) => {
  await seedWebhooks(store);
  await store.writeIngressCounts([
    { minute: minute(0), code: 'accepted', count: 3 },
    { minute: minute(1), code: 'accepted', count: 3 },
    { minute: minute(2), code: 'accepted', count: 2 },
    { minute: minute(3), code: 'accepted', count: 2 },
    { minute: minute(4), code: 'accepted', count: 2 },
    { minute: minute(5), code: 'accepted', count: 2 },
    { minute: minute(1), code: 'duplicate', count: 4 },
    { minute: minute(2), code: 'invalid_signature', count: 5 },
    { minute: minute(3), code: 'invalid_signature', count: 1 },
    { minute: minute(4), code: 'rate_limited', count: 7 },
    { minute: minute(5), code: 'rate_limited', count: 100 },
  ]);
  const ledger = await store.ledger({
    from: '2025-03-01T10:00:30.000Z',
    to: '2025-03-01T10:04:10Z',
  });
  expect(ledger).toEqual({
    from: minute(0),
    to: minute(5),
    accepted: 12,
    duplicates: 4,
    refusals: { invalid_signature: 6, rate_limited: 7 },
    completed: 5,
    failed: 3,
    in_flight: 4,
    quarantined: 0,
    discarded: 0,
    balanced: true,
  });
});

test('a quarantined webhook counts as accepted and as quarantined, and the ledger balances', async ({
  store,
}) => {
  const problems = [{ path: 'customer_id', message: 'Invalid input' }];
  await store.writeBatch([
    accepted(1n, { webhook_id: webhookId(1), received_at: minute(0), actions: [], problems }),
    accepted(2n, { webhook_id: webhookId(2), received_at: minute(0) }),
  ]);
  await store.writeIngressCounts([{ minute: minute(0), code: 'accepted', count: 2 }]);
  expect(await store.ledger({ from: minute(0), to: minute(1) })).toMatchObject({
    accepted: 2,
    in_flight: 1,
    quarantined: 1,
    discarded: 0,
    balanced: true,
  });
  const [kept] = (await store.search({ state: 'quarantined' })).webhooks;
  expect(kept).toMatchObject({ webhook_id: webhookId(1), state: 'quarantined', actions: [] });
});

test('the quarantine lists kept events newest first, each summed up (its size and problems), a page at a time', async ({
  store,
}) => {
  const problems = (n: number) => [{ path: 'customer_id', message: `problem ${n}` }];
  await store.writeBatch(
    [1, 2, 3].map((n) =>
      accepted(BigInt(n), {
        webhook_id: webhookId(n),
        received_at: minute(n),
        actions: [],
        event: { n },
        problems: problems(n),
      }),
    ),
  );
  await store.writeBatch([accepted(4n, { webhook_id: webhookId(4), received_at: minute(4) })]);
  const first = await store.quarantined({ limit: 2 });
  expect(first.quarantined).toEqual(
    [3, 2].map((n) => ({
      webhook_id: webhookId(n),
      event_type: 'quote.status_changed',
      entity_id: 'Q-1',
      received_at: minute(n),
      // `{"n": 3}`: its JSON text as the store keeps it.
      size: 8,
      problem_count: 1,
      problems: problems(n),
    })),
  );
  const rest = await store.quarantined({ limit: 2, cursor: first.next_cursor ?? '' });
  expect(rest.quarantined.map((kept) => kept.webhook_id)).toEqual([webhookId(1)]);
  expect(rest.next_cursor).toBeNull();
  expect((await store.quarantined({ from: minute(2), to: minute(3) })).quarantined).toHaveLength(1);
});

test('more accepted than recorded does not balance', async ({ store }) => {
  await seedWebhooks(store);
  await store.writeIngressCounts([
    { minute: minute(0), code: 'accepted', count: 12 },
    // A later running total of the same minute replaces the earlier one.
    { minute: minute(0), code: 'accepted', count: 13 },
  ]);
  const ledger = await store.ledger({ from: minute(0), to: minute(5) });
  expect(ledger).toMatchObject({
    accepted: 13,
    duplicates: 0,
    refusals: {},
    in_flight: 4,
    balanced: false,
  });
});

test('ingress counts: writing a total again, or an older lower one, changes nothing', async ({
  store,
}) => {
  await store.writeIngressCounts([{ minute: minute(0), code: 'accepted', count: 5 }]);
  await store.writeIngressCounts([{ minute: minute(0), code: 'accepted', count: 5 }]);
  await store.writeIngressCounts([{ minute: '2025-03-01T10:00:00Z', code: 'accepted', count: 3 }]);
  expect((await store.ledger({ from: minute(0), to: minute(1) })).accepted).toBe(5);
});

test('an empty interval, and times that are not times', async ({ store }) => {
  expect(await store.ledger({ from: minute(0), to: minute(0) })).toMatchObject({
    accepted: 0,
    completed: 0,
    balanced: true,
  });
  await expect(store.ledger({ from: 'now', to: minute(1) })).rejects.toMatchObject({
    code: INVALID_TIME,
  });
  await expect(store.ledger({ from: minute(2), to: minute(1) })).rejects.toMatchObject({
    code: INVALID_TIME,
  });
});
