import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { createRedis } from '@pw/shared/runtime';
import { PrivateRedisCluster } from '@pw/test-utils';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// A master of a Redis Cluster without replicas is down for a while: the cluster reports
// `cluster_state:fail` until it is back. Every partition's jobs are taken again once it is. A
// cluster client connecting meanwhile (BullMQ remakes a blocking connection whose fetch timed
// out, and awaits its connect) is connected: ioredis's ready check, which found the cluster
// failing, never settled that connect (docs/operations.md, Failover).

const OUTAGE_MS = 12_000;
let cluster: PrivateRedisCluster;
let h: WorkerHarness;

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start(3, { nodeTimeoutMs: 1000 });
  h = await startWorkerHarness({ redisUrl: cluster.url, cluster: true, partitions: 3 });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await cluster?.destroy();
});

/** Takes webhooks in until each partition has one; returns them. */
async function onePerPartition(): Promise<AcceptedWebhook[]> {
  const taken: AcceptedWebhook[] = [];
  const covered = new Set<number>();
  while (covered.size < h.partitions.all().length) {
    const webhook = webhookJob('quote', 'approved');
    await h.enqueue(webhook);
    taken.push(webhook);
    covered.add(h.partitions.ofWebhookId(webhook.webhook_id));
  }
  return taken;
}

/** Resolves once `node`'s view of the cluster is `cluster_state:fail`. */
async function failing(node: (typeof cluster.nodes)[number]): Promise<void> {
  const client = node.client();
  try {
    await expect
      .poll(() => client.cluster('INFO'), { timeout: 20_000, interval: 100 })
      .toContain('cluster_state:fail');
  } finally {
    client.disconnect();
  }
}

describe('a master of the cluster down for 12 s', { timeout: 120_000 }, () => {
  it('leaves no partition without its worker once it is back', async () => {
    for (const webhook of await onePerPartition()) {
      expect((await h.finished(webhook.webhook_id)).state).toBe('completed');
    }
    const [down, survivor] = cluster.nodes;
    await down!.kill();
    await failing(survivor!);
    // The outage: long enough for each partition's fetch to time out and be made again.
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await down!.resume();
    await cluster.waitUntilOk();

    for (const webhook of await onePerPartition()) {
      const outcome = await h.finished(webhook.webhook_id, 30_000);
      expect(outcome.state, `partition ${h.partitions.ofWebhookId(webhook.webhook_id)}`).toBe(
        'completed',
      );
    }
  });

  it('lets a cluster client connect while the cluster fails', async () => {
    const [down, survivor] = cluster.nodes;
    await down!.kill();
    try {
      await failing(survivor!);
      const client = createRedis(cluster.url, true, { lazyConnect: true });
      client.on('error', () => undefined);
      try {
        const connected = client.connect().then(() => 'connected');
        const waited = new Promise((resolve) => setTimeout(() => resolve('pending'), 10_000));
        expect(await Promise.race([connected, waited])).toBe('connected');
      } finally {
        client.disconnect();
      }
    } finally {
      await down!.resume();
      await cluster.waitUntilOk();
    }
  });
});
