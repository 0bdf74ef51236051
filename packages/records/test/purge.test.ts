import type pg from 'pg';
import { expect, vi } from 'vitest';
import type { RecordChange } from '../src/index.js';
import { purge } from '../src/purge.js';
import { accepted, action, audit, firstCall, outcome, webhookId } from './changes.js';
import { test } from './store-fixture.js';

const NOW = new Date('2025-06-01T12:00:00.000Z');
const daysAgo = (days: number, n = 0) =>
  new Date(NOW.getTime() - days * 86_400_000 + n * 1000).toISOString();

/** 35 of each kind of row from 100 days ago, a few from yesterday. */
function changes(): RecordChange[] {
  return [...Array(40).keys()].flatMap((n) => {
    const at = n < 35 ? daysAgo(100, n) : daysAgo(1, n);
    const webhook_id = webhookId(n);
    return [
      accepted(BigInt(n * 3 + 1), { webhook_id, received_at: at }),
      outcome(
        BigInt(n * 3 + 2),
        at,
        {
          webhook_id,
          received_at: at,
          actions: [action('notify_crm', { state: 'completed', attempts: 1 })],
        },
        firstCall('notify_crm', at, 1),
      ),
      ...(n < 38 ? [audit(BigInt(n * 3 + 3), { at })] : []),
    ];
  });
}

const counts = async (db: pg.Pool) =>
  (
    await db.query<
      Record<string, number>
    >(`select (select count(*) from webhooks)::int as webhooks, (select count(*) from actions)::int as actions,
      (select count(*) from attempts)::int as attempts, (select count(*) from audit_entries)::int as audit_entries,
      (select count(*) from ingress_counts)::int as ingress_counts`)
  ).rows[0];

test('purge removes only what is past retention, in batches', async ({ store, db }) => {
  await store.writeBatch(changes());
  await store.writeIngressCounts(
    [...Array(37).keys()].map((n) => ({
      minute: n < 35 ? daysAgo(100, n * 60) : daysAgo(1, n * 60),
      code: 'accepted',
      count: 1,
    })),
  );
  const query = vi.spyOn(db, 'query');
  const removed = await purge(db, { retentionDays: 90, batchSize: 10, now: NOW });
  expect(removed).toEqual({ webhooks: 35, audit_entries: 35, ingress_counts: 35 });
  const deletes = query.mock.calls.map(([text]) => String(text).match(/^delete from (\w+)/)?.[1]);
  // 10 + 10 + 10 + 5 rows each.
  expect(deletes.filter((table) => table === 'webhooks')).toHaveLength(4);
  expect(deletes.filter((table) => table === 'audit_entries')).toHaveLength(4);
  expect(await counts(db)).toEqual({
    webhooks: 5,
    actions: 5,
    attempts: 5,
    audit_entries: 3,
    ingress_counts: 2,
  });
  const kept = await store.search({ limit: 500 });
  expect(kept.webhooks.map((w) => w.webhook_id).sort()).toEqual(
    [35, 36, 37, 38, 39].map(webhookId),
  );
  expect(await store.purge({ retentionDays: 90, now: NOW })).toEqual({
    webhooks: 0,
    audit_entries: 0,
    ingress_counts: 0,
  });
});

test('a retention of no days is refused', async ({ store }) => {
  await expect(store.purge({ retentionDays: 0 })).rejects.toThrow(TypeError);
});

test('a quarantined webhook is kept the retention, listed with its event until then, and purged after it', async ({
  store,
  db,
}) => {
  const problems = [{ path: 'product.price_with_taxes', message: 'Invalid input' }];
  await store.writeBatch(
    [91, 89].map((days, n) =>
      accepted(BigInt(n + 1), {
        webhook_id: webhookId(n),
        received_at: daysAgo(days),
        actions: [],
        problems,
      }),
    ),
  );
  expect((await store.quarantined()).quarantined).toHaveLength(2);
  expect(await purge(db, { retentionDays: 90, now: NOW })).toMatchObject({ webhooks: 1 });
  const { quarantined } = await store.quarantined();
  const kept = await store.quarantinedEvents([webhookId(1)]);
  expect([...kept.keys()]).toEqual([webhookId(1)]);
  expect(kept.get(webhookId(1))).toMatchObject({ event: { status: 'accepted' }, problems });
  expect(quarantined).toEqual([expect.objectContaining({ webhook_id: webhookId(1), problems })]);
});
