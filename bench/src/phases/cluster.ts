// `npm run bench -- --cluster K` (docs/performance.md → Capacity): the system on a K-master Redis
// Cluster of real redis-server processes with 4K queue partitions. The ingress takes a backlog in,
// two worker processes drain it, and each master's share of the Redis CPU the system spent shows
// how evenly the partitions spread the work; every acknowledged webhook must have finished.
import type { Queue } from 'bullmq';
import { OutcomeStore } from '@pw/shared/outcomes';
import { ActionQueues, Partitions } from '@pw/shared/queue';
import { createRedis } from '@pw/shared/runtime';
import type { RedisClient } from '@pw/shared/runtime';
import type { MasterStats } from '@pw/test-utils';
import type { BenchRun } from '../bench-run.js';
import { drive } from '../load.js';
import { jobsLeft, until } from '../poll.js';
import { startIngress, startWorker, whileUp } from '../processes.js';
import type { Sandbox } from '../processes.js';

export interface ClusterFigures {
  masters: number;
  partitions: number;
  webhooks_accepted: number;
  /** Actions completed per second while two worker processes drained the backlog. */
  actions_per_s: number;
  /** Each master's share of the Redis CPU spent over intake and drain, largest first. */
  redis_cluster_cpu_shares: number[];
  /** Acknowledged webhooks whose outcome did not finish completed: must be 0. */
  lost: number;
}

/** Partitions per master the phase runs with: the least the docs advise. */
const PARTITIONS_PER_MASTER = 4;

/** How long an outcome check waits on a partition client before it counts a webhook lost. */
const settleMs = 30_000;

export async function clusterPhase(
  bench: BenchRun,
  sandbox: Sandbox,
  masters: number,
): Promise<ClusterFigures> {
  const cluster = await bench.startPrivateCluster(masters);
  const prefix = `{${bench.prefix}}`;
  const partitions = new Partitions(prefix, PARTITIONS_PER_MASTER * masters);
  const env = {
    REDIS_URL: cluster.url,
    REDIS_CLUSTER: 'true',
    QUEUE_PREFIX: prefix,
    QUEUE_PARTITIONS: String(partitions.count),
  };
  const redis = createRedis(cluster.url, true);
  const queues = new ActionQueues(redis, partitions);
  try {
    const before = await cluster.masterStats();
    const webhooks = bench.options.quick ? 500 : 5000;
    bench.log(
      `cluster: ${masters} masters, ${partitions.count} partitions: ${webhooks} webhooks in`,
    );
    const ingress = await startIngress(bench, cluster.url, 1, env);
    bench.pool.fill(webhooks);
    const load = await whileUp(
      drive(bench.pool, {
        url: ingress.url,
        connections: bench.options.connections,
        durationSeconds: 600,
        amount: webhooks,
        recordAcks: true,
      }),
      ingress.child,
    );
    await ingress.child.stop();
    const acked = [...(load.acks?.keys() ?? [])];
    const completedBefore = await completed(queues.all);
    bench.log(`cluster: two worker processes draining ${acked.length} webhooks`);
    const started = performance.now();
    const workers = await Promise.all([
      startWorker(bench, sandbox, env),
      startWorker(bench, sandbox, env),
    ]);
    await whileUp(
      until(async () => (await jobsLeft([...queues.all])) === 0),
      ...workers,
    );
    const seconds = (performance.now() - started) / 1000;
    const actions = (await completed(queues.all)) - completedBefore;
    const after = await cluster.masterStats();
    await Promise.all(workers.map((worker) => worker.stop()));
    return {
      masters,
      partitions: partitions.count,
      webhooks_accepted: acked.length,
      actions_per_s: Math.round(actions / seconds),
      redis_cluster_cpu_shares: cpuShares(before, after),
      lost: await unfinished(redis, partitions, acked),
    };
  } finally {
    await queues.close();
    redis.disconnect();
  }
}

/** Completed action jobs across `queues`. */
async function completed(queues: readonly Queue[]): Promise<number> {
  const counts = await Promise.all(queues.map((queue) => queue.getCompletedCount()));
  return counts.reduce((a, b) => a + b, 0);
}

/** Each master's share of the CPU spent between `before` and `after`, largest first. */
export function cpuShares(before: MasterStats[], after: MasterStats[]): number[] {
  const spent = after.map(
    (stats) => stats.cpuSeconds - (before.find((b) => b.port === stats.port)?.cpuSeconds ?? 0),
  );
  const total = spent.reduce((a, b) => a + b, 0);
  return spent.map((seconds) => Math.round((seconds / total) * 1000) / 1000).sort((a, b) => b - a);
}

/** Acknowledged webhooks whose outcome record is not completed, read in their partitions. */
async function unfinished(
  redis: RedisClient,
  partitions: Partitions,
  acked: string[],
): Promise<number> {
  const stores = partitions.prefixes.map(
    (queuePrefix) => new OutcomeStore(redis, { queuePrefix, recordTtlSeconds: 3600 }),
  );
  const deadline = Date.now() + settleMs;
  let missing = acked;
  while (missing.length > 0 && Date.now() < deadline) {
    const outcomes = await Promise.all(
      missing.map((id) => stores[partitions.ofWebhookId(id)]!.get(id)),
    );
    missing = missing.filter((_, index) => outcomes[index]?.state !== 'completed');
    if (missing.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return missing.length;
}
