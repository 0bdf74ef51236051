// With QUEUE_PARTITIONS=4 the recorder reads every partition's record stream, writes its changes
// to PostgreSQL, trims each stream, and sums the partitions' ingress counts of a minute.
import { expect, test, vi } from 'vitest';
import { RejectedChanges } from '@pw/records';
import { OutcomeStore } from '@pw/shared/outcomes';
import { keys, Partitions } from '@pw/shared/queue';
import { AuditLog, IngressCounts, recordStreamKey } from '@pw/shared/records';
import { startIntake } from '@pw/test-utils';
import { job, log, recorderHarness, schemaStore, startRecorder } from './harness.js';
import type { RecorderHarness } from './harness.js';

const harness = recorderHarness();

/** The partitions of the test's prefix, the ingress's intake over them, their outcome records. */
function partitioned(h: RecorderHarness, count: number) {
  const partitions = new Partitions(h.prefix, count);
  const intake = startIntake(h.redis, h.prefix, {
    retry: { attempts: 8, backoff: { type: 'exponential', delay_ms: 1000 } },
    recordTtlSeconds: 600,
    partitions: count,
  });
  h.cleanups.push(() => intake.close());
  const outcomes = partitions.prefixes.map(
    (prefix) => new OutcomeStore(h.redis, { queuePrefix: prefix, recordTtlSeconds: 600 }),
  );
  return { partitions, intake, outcomes };
}

/** Takes a webhook of partition `index` in and completes its one action. */
async function completeIn(
  { partitions, intake, outcomes: byPartition }: ReturnType<typeof partitioned>,
  index: number,
): Promise<string> {
  const accepted = job(['notify_customer'], { webhook_id: partitions.newWebhookId(index) });
  const outcomes = byPartition[index]!;
  await intake.add(accepted);
  const attempts = await outcomes.started(accepted.webhook_id, 'notify_customer');
  const timing = { started_at: accepted.received_at, status: 200, duration_ms: 1 };
  await outcomes.completed(accepted.webhook_id, 'notify_customer', timing, attempts);
  return accepted.webhook_id;
}

/** Resolves once every partition's stream holds nothing the store lacks. */
async function allDrained(h: RecorderHarness, partitions: Partitions): Promise<void> {
  await vi.waitFor(
    async () => {
      const lengths = await Promise.all(
        partitions.prefixes.map((prefix) => h.redis.xlen(recordStreamKey(prefix))),
      );
      expect(lengths).toEqual(partitions.prefixes.map(() => 0));
    },
    { timeout: 30_000, interval: 50 },
  );
}

test('webhooks of all four partitions reach the store, and every stream is trimmed', async () => {
  const { store } = await schemaStore(harness);
  const setup = partitioned(harness, 4);
  const { partitions } = setup;
  await startRecorder(harness, store, { partitions });

  const ids: string[] = [];
  for (const index of [0, 1, 2, 3, 3, 2]) ids.push(await completeIn(setup, index));
  // Every partition's stream had changes to write.
  await allDrained(harness, partitions);

  for (const id of ids) {
    expect(await store.webhook(id)).toMatchObject({ webhook_id: id, state: 'completed' });
  }
  // The ledger's accepted count is each partition's count of the minute, summed.
  const from = new Date(Date.now() - 120_000).toISOString();
  const to = new Date(Date.now() + 60_000).toISOString();
  await vi.waitFor(
    async () =>
      expect(await store.ledger({ from, to })).toMatchObject({
        accepted: ids.length,
        completed: ids.length,
        balanced: true,
      }),
    { timeout: 10_000, interval: 50 },
  );
});

test("audit entries go to partition 0's stream, whichever webhook they name, and all reach the store", async () => {
  const { store } = await schemaStore(harness);
  const { partitions } = partitioned(harness, 4);
  const audit = new AuditLog(harness.redis, partitions, log);
  const webhookId = partitions.newWebhookId(3);
  await audit.record({ user: 'ops', action: 'replay', target: webhookId, details: {} }, 'replay');
  await audit.record(
    { user: 'ops', action: 'rules_replaced', target: 'rules', details: {} },
    'rules replaced',
  );
  const lengths = () =>
    Promise.all(partitions.prefixes.map((prefix) => harness.redis.xlen(recordStreamKey(prefix))));
  // One stream: the store keys audit entries by their stream ids, unique within a stream only.
  expect(await lengths()).toEqual([2, 0, 0, 0]);

  await startRecorder(harness, store, { partitions });
  await allDrained(harness, partitions);
  const { entries } = await store.audit({ limit: 10 });
  expect(entries.map((entry) => entry.target).sort()).toEqual(['rules', webhookId].sort());
});

test('ingress counts of one minute in several partitions are written as their sum, those kept from before the start included', async () => {
  const { store } = await schemaStore(harness);
  const { partitions } = partitioned(harness, 4);
  const at = new Date();
  // Counted before the recorder starts, two minutes earlier (a minute no other partition
  // counts), its minute then taken off the changed set, as by a recorder that died before
  // writing it.
  const before = new IngressCounts(harness.redis, partitions.prefix(1), 60_000);
  for (let n = 0; n < 3; n += 1) before.count('duplicate', new Date(at.getTime() - 120_000));
  await before.close();
  await harness.redis.del(keys.ingressCountsChanged(partitions.prefix(1)));

  await startRecorder(harness, store, { partitions });
  const counts = new IngressCounts(harness.redis, partitions.prefix(2), 60_000);
  for (let n = 0; n < 2; n += 1) counts.count('duplicate', at);
  counts.count('invalid_signature', at);
  await counts.close();

  const from = new Date(at.getTime() - 180_000).toISOString();
  const to = new Date(at.getTime() + 60_000).toISOString();
  await vi.waitFor(
    async () =>
      expect(await store.ledger({ from, to })).toMatchObject({
        duplicates: 5,
        refusals: { invalid_signature: 1 },
      }),
    { timeout: 10_000, interval: 50 },
  );
});

test('a change of partition 2 the store refuses is set aside on the shared prefix and re-driven to its own stream', async () => {
  const { store } = await schemaStore(harness);
  const { partitions } = partitioned(harness, 4);
  const stream = recordStreamKey(partitions.prefix(2));
  // An entry no recorder can read: refused on its own.
  await harness.redis.xadd(stream, '*', 'k', 'webhook', 'd', '{not json');
  const recorder = await startRecorder(harness, store, { partitions });
  await allDrained(harness, partitions);
  const rejected = new RejectedChanges(harness.redis, partitions);
  expect(await rejected.count()).toBe(1);
  expect(await harness.redis.xlen(`${recordStreamKey(harness.prefix)}:rejected`)).toBe(1);

  await recorder.stop();
  await rejected.redrive();
  // Back where it came from (no recorder running to read it again).
  expect(await harness.redis.xrange(stream, '-', '+')).toMatchObject([
    [expect.any(String), expect.arrayContaining(['k', 'webhook', 'd', '{not json'])],
  ]);
  expect(await rejected.count()).toBe(0);
});
