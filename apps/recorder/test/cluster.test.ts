// The recorder on a real 3-master Redis Cluster with 12 partitions: it reads the stream of each
// partition on whichever master holds it, and at start finds the ingress counts kept on every
// master (SCAN reads one node only).
import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { noCall, OutcomeStore } from '@pw/shared/outcomes';
import { keys, Partitions } from '@pw/shared/queue';
import { IngressCounts, recordStreamKey } from '@pw/shared/records';
import { PrivateRedisCluster, startIntake } from '@pw/test-utils';
import { Recorder } from '../src/recorder.js';
import { job, log, recorderHarness, schemaStore } from './harness.js';

// The harness's per-test Redis stays unused here but for its cleanups.
const harness = recorderHarness();
let cluster: PrivateRedisCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await PrivateRedisCluster.start(3);
  client = cluster.client();
}, 60_000);
afterAll(async () => {
  client?.disconnect();
  await cluster?.destroy();
});

test('writes the webhooks of 12 partitions spread over 3 masters, trims every stream, and copies the counts kept on every master', async () => {
  const { store } = await schemaStore(harness);
  const partitions = new Partitions(`{pwtest-${randomBytes(6).toString('hex')}}`, 12);
  const at = new Date();
  // Counted in every partition before the recorder starts, each in a minute of its own, each
  // minute then taken off its changed set, as by a recorder that died before writing them.
  for (const [index, prefix] of partitions.prefixes.entries()) {
    const counts = new IngressCounts(client, prefix, 60_000);
    counts.count('duplicate', new Date(at.getTime() - index * 60_000));
    await counts.close();
    await client.del(keys.ingressCountsChanged(prefix));
  }
  // Closed after the recorder: left open, it went on asking the stopped cluster for its slots.
  const connection = client.duplicate();
  const recorder = new Recorder(
    connection,
    store,
    { partitions, consumer: 'test', retentionDays: 90, recordTtlSeconds: 3600, blockMs: 50 },
    log,
  );
  await recorder.start();
  harness.cleanups.push(async () => {
    await recorder.stop();
    connection.disconnect();
  });

  // The test's intake helper is typed for one Redis; BullMQ and the intake take a cluster too.
  const intake = startIntake(client as unknown as Redis, partitions.shared, {
    retry: { attempts: 1, backoff: { type: 'fixed', delay_ms: 1 } },
    partitions: partitions.count,
  });
  harness.cleanups.push(() => intake.close());
  const ids: string[] = [];
  for (const [index, prefix] of partitions.prefixes.entries()) {
    const accepted = job(['notify_customer'], { webhook_id: partitions.newWebhookId(index) });
    await intake.add(accepted);
    const outcomes = new OutcomeStore(client, { queuePrefix: prefix, recordTtlSeconds: 600 });
    const attempts = await outcomes.started(accepted.webhook_id, 'notify_customer');
    await outcomes.completed(accepted.webhook_id, 'notify_customer', noCall(), attempts);
    ids.push(accepted.webhook_id);
  }

  await vi.waitFor(
    async () => {
      const lengths = await Promise.all(
        partitions.prefixes.map((prefix) => client.xlen(recordStreamKey(prefix))),
      );
      expect(lengths).toEqual(partitions.prefixes.map(() => 0));
    },
    { timeout: 30_000, interval: 100 },
  );
  for (const id of ids) expect(await store.webhook(id)).toMatchObject({ state: 'completed' });
  const from = new Date(at.getTime() - 12 * 60_000).toISOString();
  const to = new Date(Date.now() + 60_000).toISOString();
  await vi.waitFor(
    async () =>
      expect(await store.ledger({ from, to })).toMatchObject({
        duplicates: 12,
        accepted: 12,
        completed: 12,
      }),
    { timeout: 10_000, interval: 100 },
  );
}, 90_000);
