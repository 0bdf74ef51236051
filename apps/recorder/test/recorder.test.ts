import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { RecordStore } from '@pw/records';
import { countMinute } from '@pw/shared/outcomes';
import { channels, keys } from '@pw/shared/queue';
import { AuditLog, recordStreamKey } from '@pw/shared/records';
import { freePort, newTestRedis, startTestPostgres } from '@pw/test-utils';
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
const { cleanups } = harness;

test('an action answered 503, 503, then 200 has three attempts in its history', async () => {
  const { store } = await schemaStore(harness);
  await startRecorder(harness, store);
  const accepted = job();
  await harness.intake.add(accepted);
  const timing = (status: number) => ({
    started_at: new Date().toISOString(),
    status,
    duration_ms: 3,
  });
  for (const status of [503, 503]) {
    await harness.outcomes.started(accepted.webhook_id, 'notify_customer');
    await harness.outcomes.failed(
      accepted.webhook_id,
      'notify_customer',
      'retrying',
      `http_${status}: answered ${status}`,
      timing(status),
    );
  }
  const attempts = await harness.outcomes.started(accepted.webhook_id, 'notify_customer');
  await harness.outcomes.completed(accepted.webhook_id, 'notify_customer', timing(200), attempts);
  await drained(harness);

  const stored = await store.webhook(accepted.webhook_id);
  expect(stored).toMatchObject({
    webhook_id: accepted.webhook_id,
    customer_id: accepted.event.customer_id,
    state: 'completed',
    event: accepted.event,
  });
  expect(stored?.finished_at).not.toBeNull();
  const history = stored?.actions[0]?.history ?? [];
  expect(history.map(({ attempt, outcome, status }) => ({ attempt, outcome, status }))).toEqual([
    { attempt: 1, outcome: 'retrying', status: 503 },
    { attempt: 2, outcome: 'retrying', status: 503 },
    { attempt: 3, outcome: 'completed', status: 200 },
  ]);
  expect(history[0]?.error).toContain('answered 503');
  expect(history[2]?.error).toBeNull();
});

test('a completed call is written to the record at once, reaches the store as its own change, and a later snapshot keeps it', async () => {
  const { store } = await schemaStore(harness);
  const { outcomes, redis, prefix } = harness;
  const accepted = job(['notify_customer', 'update_sales_opportunity']);
  const id = accepted.webhook_id;
  await harness.intake.add(accepted);
  const inFlightTtl = await redis.ttl(keys.outcome(prefix, id));
  const subscriber = newTestRedis();
  cleanups.push(() => subscriber.quit());
  const seen: string[] = [];
  // Each announcement read at once: the record must already hold what it announces.
  subscriber.on('message', (_channel: string, message: string) => {
    void redis.hget(keys.outcome(prefix, message), 'notify_customer:state').then((state) => {
      seen.push(state ?? 'none');
    });
  });
  await subscriber.subscribe(channels.outcomeChanged(prefix));
  // The worker's common path: the call counted at its start, completed.
  const timing = { started_at: new Date().toISOString(), status: 200, duration_ms: 3 };
  const attempts = await outcomes.started(id, 'notify_customer');
  expect(attempts).toBe(1);
  await expect.poll(() => seen).toEqual(['active']);
  await outcomes.completed(id, 'notify_customer', timing, attempts);
  expect(await outcomes.get(id)).toMatchObject({
    state: 'processing',
    actions: [{ state: 'completed', attempts: 1, last_error: null }, { state: 'waiting' }],
  });
  await expect.poll(() => seen).toEqual(['active', 'completed']);
  // The other action retries, then completes: its snapshots have the first one completed.
  await outcomes.started(id, 'update_sales_opportunity');
  await outcomes.failed(id, 'update_sales_opportunity', 'retrying', 'http_503', timing);
  const second = await outcomes.started(id, 'update_sales_opportunity');
  await outcomes.completed(id, 'update_sales_opportunity', timing, second);
  // Kept as long as in flight until the store has the webhook finished.
  expect(await redis.ttl(keys.outcome(prefix, id))).toBe(inFlightTtl);

  await startRecorder(harness, store, { recordTtlSeconds: 60 });
  await drained(harness);
  const stored = await store.webhook(id);
  expect(stored).toMatchObject({ state: 'completed' });
  expect(stored?.finished_at).not.toBeNull();
  const [first, other] = stored?.actions ?? [];
  expect(first).toMatchObject({ state: 'completed', attempts: 1, last_error: null });
  expect(first?.history.map(({ attempt, outcome, status }) => [attempt, outcome, status])).toEqual([
    [1, 'completed', 200],
  ]);
  expect(other).toMatchObject({ state: 'completed', attempts: 2 });
  expect(other?.history.map(({ attempt, outcome }) => [attempt, outcome])).toEqual([
    [1, 'retrying'],
    [2, 'completed'],
  ]);
  // The recorder wrote no field of Redis's record, and shortened it to RECORD_TTL_SECONDS.
  expect(await outcomes.get(id)).toMatchObject({ state: 'completed' });
  const ttl = await redis.ttl(keys.outcome(prefix, id));
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(60);
  // Counted once each in its minute's completed actions, by the worker.
  const minutes = new Set(
    [first?.completed_at, other?.completed_at].map((at) => countMinute(new Date(at ?? ''))),
  );
  let completed = 0;
  for (const minute of minutes) {
    completed += Number(await redis.hget(keys.actionCounts(prefix, minute), 'completed'));
  }
  expect(completed).toBe(2);
});

test('an event older than one its entity had is stale in the store, though its action completed on its first call', async () => {
  const { store } = await schemaStore(harness);
  const event = (timestamp: string) => ({
    quote_id: 'Q-stale',
    customer_id: 'C-1',
    status: 'approved',
    timestamp,
  });
  const newer = job(['notify_customer'], {
    entity_id: 'Q-stale',
    event: event('2026-11-26T10:00:00.000Z'),
  });
  const older = job(['notify_customer'], {
    entity_id: 'Q-stale',
    event: event('2026-11-26T09:00:00.000Z'),
  });
  await harness.intake.add(newer);
  await harness.intake.add(older);
  const timing = { started_at: new Date().toISOString(), status: 200, duration_ms: 1 };
  for (const { webhook_id: id } of [newer, older]) {
    const attempts = await harness.outcomes.started(id, 'notify_customer');
    await harness.outcomes.completed(id, 'notify_customer', timing, attempts);
  }
  await startRecorder(harness, store);
  await drained(harness);
  expect(await store.webhook(older.webhook_id)).toMatchObject({ state: 'completed', stale: true });
  expect(await store.webhook(newer.webhook_id)).toMatchObject({ state: 'completed', stale: false });
});

test('a store that answers but cannot write (disk full) keeps the batch pending: nothing set apart, all written later', async () => {
  const { store } = await schemaStore(harness);
  let refusals = 3;
  const diskFull: Pick<RecordStore, 'writeBatch' | 'writeIngressCounts' | 'purge' | 'ping'> = {
    writeBatch: (changes) => {
      if (refusals-- > 0) {
        return Promise.reject(Object.assign(new Error('could not extend file'), { code: '53100' }));
      }
      return store.writeBatch(changes);
    },
    writeIngressCounts: (rows) => store.writeIngressCounts(rows),
    purge: (options) => store.purge(options),
    ping: () => store.ping(),
  };
  await startRecorder(harness, diskFull);
  const accepted = job();
  await harness.intake.add(accepted);
  await drained(harness);
  expect(refusals).toBeLessThan(0);
  expect(await harness.redis.xlen(`${recordStreamKey(harness.prefix)}:rejected`)).toBe(0);
  expect(await store.webhook(accepted.webhook_id)).toMatchObject({ state: 'queued' });
});

test('a change to a record Redis no longer holds is refused: no half record, nothing sent to the store', async () => {
  await harness.outcomes.started('wh_gone00000000000000000', 'notify_customer');
  await harness.outcomes.failed(
    'wh_gone00000000000000000',
    'notify_customer',
    'failed',
    'http_400: no',
  );
  expect(await harness.redis.exists(`${harness.prefix}:outcome:wh_gone00000000000000000`)).toBe(0);
  expect(await harness.redis.xlen(recordStreamKey(harness.prefix))).toBe(0);
});

test('audit entries reach the store', async () => {
  const { store } = await schemaStore(harness);
  await startRecorder(harness, store);
  const audit = new AuditLog(harness.redis, harness.prefix, log);
  await audit.record(
    { user: 'ops', action: 'replay', target: 'wh_x', details: { actions: ['a'] } },
    'replay',
  );
  await drained(harness);
  const { entries } = await store.audit({ limit: 10 });
  expect(entries).toMatchObject([
    { user: 'ops', action: 'replay', target: 'wh_x', details: { actions: ['a'] } },
  ]);
});

test('PostgreSQL stopped under load: every change waits in Redis and is written once it is back', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pw-recorder-pg-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  // The apps' password kept across the restart, as a real store's would be.
  const password = 'recorder-outage-test';
  let server = await startTestPostgres({ dataDir, port, password });
  cleanups.push(() => server.stop());
  const store = await RecordStore.open({ databaseUrl: server.url, poolSize: 2 });
  cleanups.push(() => store.close());
  const metrics = new RecorderMetrics();
  await startRecorder(harness, store, { metrics });

  // A steady load throughout: a webhook opened and finished every 20 ms.
  const sent: string[] = [];
  let loading = true;
  const load = (async () => {
    while (loading) {
      const accepted = await completeWebhook(harness, job());
      sent.push(accepted.webhook_id);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();

  const waitFor = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 100));
  };
  await waitFor(() => sent.length >= 20);
  await server.stop();
  // The outage lasts until more than 100 changes wait in Redis, the property being that they wait
  // there however long it lasts. The suite's minute-long outage is the end-to-end one, through the
  // whole system (tests/e2e/test/store-outage.test.ts).
  const waiting = () => harness.redis.xlen(recordStreamKey(harness.prefix));
  const pile = async () => {
    while ((await waiting()) <= 100) await new Promise((resolve) => setTimeout(resolve, 100));
  };
  await pile();
  // The outage shows: `record_store_up` is 0 while the changes wait.
  expect((await metrics.storeUp.get()).values[0]?.value).toBe(0);
  server = await startTestPostgres({ dataDir, port, password });
  const sentBeforeRestart = sent.length;
  await waitFor(() => sent.length >= sentBeforeRestart + 50);
  loading = false;
  await load;
  await drained(harness);

  // One at a time: thousands at once would wait in the pool of 2 past its connection time-out.
  const missing: string[] = [];
  for (const id of sent) {
    if ((await store.webhook(id))?.state !== 'completed') missing.push(id);
  }
  expect(missing).toEqual([]);
}, 240_000);
