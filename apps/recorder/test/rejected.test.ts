// One change the record store refuses never stops the others: it is set aside, counted, and
// re-driven after a fix; and the backlog reads true while the store cannot be reached.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { expect, test } from 'vitest';
import { RecordStore, RejectedChanges } from '@pw/records';
import { noCall } from '@pw/shared/outcomes';
import { AuditLog, IngressCounts, recordStreamKey } from '@pw/shared/records';
import { freePort } from '@pw/test-utils';
import { RecorderMetrics } from '../src/metrics.js';
import {
  completeWebhook,
  drained,
  job,
  log,
  recorderHarness,
  schemaStore,
  startRecorder,
} from './harness.js';

const harness = recorderHarness();

/** Resolves once `condition` holds, checking every 50 ms; throws after `ms`. */
async function until(condition: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not so within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A metric's value as the recorder's `/metrics` would show it. */
async function metric(metrics: RecorderMetrics, name: string): Promise<number> {
  const text = await metrics.registry.getSingleMetricAsString(name);
  const line = text.split('\n').find((row) => row.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

test('a change PostgreSQL refuses alone (an index entry over its size limit) is set aside; every change behind it, attempts and audit entries included, is written; re-driven after the fix, it is written too', async () => {
  const { store, schema } = await schemaStore(harness);
  // An index on the entity id itself, as the store must not have: an entity id that does not
  // compress outgrows a B-tree entry, and PostgreSQL refuses the row (SQLSTATE 54000).
  const db = await adminPool(schema);
  await db.query(`create index plain_entity on webhooks (entity_id)`);
  const metrics = new RecorderMetrics();
  await startRecorder(harness, store, { metrics });

  const poison = job(['notify_customer'], { entity_id: randomBytes(2400).toString('base64') });
  await completeWebhook(harness, poison);
  const later = await completeWebhook(harness, job());
  await new AuditLog(harness.redis, harness.prefix, log).record(
    { user: 'ops', action: 'replay', target: later.webhook_id, details: {} },
    'replay',
  );
  await drained(harness);

  const stored = await store.webhook(later.webhook_id);
  expect(stored).toMatchObject({ state: 'completed' });
  expect(stored?.actions[0]?.history).toHaveLength(1);
  expect((await store.audit()).entries).toMatchObject([{ target: later.webhook_id }]);
  expect(await store.webhook(poison.webhook_id)).toBeNull();

  const rejected = new RejectedChanges(harness.redis, harness.prefix);
  const { rejected: listed } = await rejected.list({ limit: 10 });
  // Both changes of the poisoned webhook (its intake, and its action's completion, which needs
  // the webhook's row), newest first.
  expect(listed).toMatchObject([
    { kind: 'completed', webhook_id: poison.webhook_id },
    { kind: 'webhook', webhook_id: poison.webhook_id, error: { code: '54000' } },
  ]);
  expect(await metric(metrics, 'record_changes_rejected_total')).toBe(2);
  expect(await metric(metrics, 'record_changes_set_aside')).toBe(2);

  // The fix, then the re-drive.
  await db.query(`drop index plain_entity`);
  expect(await rejected.redrive()).toEqual(listed.map((change) => change.id).reverse());
  await until(async () => (await store.webhook(poison.webhook_id))?.event != null);
  expect(await store.webhook(poison.webhook_id)).toMatchObject({ entity_id: poison.entity_id });
  expect(await rejected.count()).toBe(0);
  expect(await metric(metrics, 'record_changes_set_aside')).toBe(0);
});

test('a re-driven change keeps its place: a webhook change refused and re-driven after its outcome was written does not move the record back', async () => {
  const { store, schema } = await schemaStore(harness);
  const db = await adminPool(schema);
  // The store refuses rows whose event says so, as it would refuse any one bad row.
  await db.query(`create function refuse_marked() returns trigger language plpgsql as $$
    begin
      if new.event ->> 'refuse' = 'yes' then
        raise exception 'refused for the test' using errcode = '22023';
      end if;
      return new;
    end $$`);
  await db.query(`create trigger refuse_marked before insert or update on webhooks
    for each row execute function refuse_marked()`);
  await startRecorder(harness, store);

  const accepted = job(['notify_customer'], {
    event: { quote_id: 'Q-marked', customer_id: 'C-1', status: 'approved', refuse: 'yes' },
  });
  // A first call that fails: its change (the whole record after it) brings the webhook's row.
  const { outcomes } = harness;
  await harness.intake.add(accepted);
  await outcomes.started(accepted.webhook_id, 'notify_customer');
  await outcomes.failed(accepted.webhook_id, 'notify_customer', 'retrying', 'http_503');
  await outcomes.completed(
    accepted.webhook_id,
    'notify_customer',
    noCall(),
    await outcomes.started(accepted.webhook_id, 'notify_customer'),
  );
  await drained(harness);
  const rejected = new RejectedChanges(harness.redis, harness.prefix);
  expect(await rejected.count()).toBe(1);
  expect(await store.webhook(accepted.webhook_id)).toMatchObject({
    state: 'completed',
    event: null,
  });

  await db.query(`drop trigger refuse_marked on webhooks`);
  await rejected.redrive();
  await until(async () => (await store.webhook(accepted.webhook_id))?.event != null);
  // The event and customer the webhook change brings, and the state its later outcome set.
  expect(await store.webhook(accepted.webhook_id)).toMatchObject({
    state: 'completed',
    customer_id: 'C-1',
    event: { quote_id: 'Q-marked' },
  });
});

test('while the store cannot be reached, record_backlog reads the changes waiting in Redis and nothing is set aside', async () => {
  // A PostgreSQL address nothing answers on: every write fails as an outage.
  const store = RecordStore.connect({
    databaseUrl: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
  });
  harness.cleanups.push(() => store.close());
  const metrics = new RecorderMetrics();
  await startRecorder(harness, store, { metrics });
  for (let n = 0; n < 5; n += 1) await completeWebhook(harness, job());
  // And the ingress's counts, which change every minute in a running system.
  const counts = new IngressCounts(harness.redis, harness.prefix, 60_000);
  counts.count('duplicate');
  await counts.close();
  const waiting = await harness.redis.xlen(recordStreamKey(harness.prefix));
  // Two changes a webhook: its intake and its action's completion.
  expect(waiting).toBe(10);
  await until(async () => (await metric(metrics, 'record_store_up')) === 0);
  expect(await metric(metrics, 'record_backlog')).toBe(waiting);
  expect(await new RejectedChanges(harness.redis, harness.prefix).count()).toBe(0);
});

/** A pool on the test's schema, to change the store's tables as an operator would. */
async function adminPool(schema: { databaseUrl: string; schema: string }): Promise<pg.Pool> {
  const { default: pgModule } = await import('pg');
  const pool = new pgModule.Pool({
    connectionString: schema.databaseUrl,
    options: `-c search_path=${schema.schema}`,
  });
  harness.cleanups.push(() => pool.end());
  return pool;
}
