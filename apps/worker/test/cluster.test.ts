import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { PrivateRedisCluster } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// The worker over six partitions of a real three-master Redis Cluster: every script and
// transaction touches the keys of one slot (a partition's, or the circuits'), so none fails
// with CROSSSLOT, the circuit's held jobs live on other masters than the circuit, and the
// partitions' keys spread over every master.

const PROBE_MS = 300;
let cluster: PrivateRedisCluster;
let h: WorkerHarness;

const isHeld = (outcome: WebhookOutcome) =>
  outcome.actions.some((action) => action.held === 'circuit_open');

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start(3);
  h = await startWorkerHarness({
    redisUrl: cluster.url,
    cluster: true,
    partitions: 6,
    attempts: 3,
    backoff: { type: 'fixed', delay_ms: 50 },
    circuit: { failureThreshold: 3, probeIntervalMs: PROBE_MS },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await cluster?.destroy();
});

describe('a worker on a Redis Cluster with six partitions', { timeout: 60_000 }, () => {
  it('completes every action, through a clean circuit and through an outage that holds them', async () => {
    const first = Array.from({ length: 12 }, () => webhookJob('quote', 'approved'));
    for (const job of first) await h.enqueue(job);
    for (const job of first) expect((await h.finished(job.webhook_id)).state).toBe('completed');
    await expect.poll(() => h.worker.circuitCopy.clean(circuitTarget(h.target))).toBe(true);

    h.sandbox.api.failNext({ path: /.*/, status: 503, forMs: 10 * PROBE_MS });
    const second = Array.from({ length: 12 }, () => webhookJob('contract', 'active'));
    for (const job of second) await h.enqueue(job);
    await h.until(second[0]!.webhook_id, isHeld);
    for (const job of second) {
      const outcome = await h.finished(job.webhook_id, 30_000);
      expect(outcome.state, JSON.stringify(outcome)).toBe('completed');
    }
    // Each master holds some of the partitions' keys.
    for (const node of cluster.nodes) {
      const client = node.client();
      expect(await client.dbsize()).toBeGreaterThan(0);
      client.disconnect();
    }
  });
});
