import { startSandbox } from '@pw/sandbox';
import type { Sandbox } from '@pw/sandbox';
import { PrivateRedisCluster } from '@pw/test-utils';
import type { PrivateRedisClusterOptions } from '@pw/test-utils';

/**
 * A Redis Cluster of the test's own and the sandbox, started at once; when one fails, the other
 * is stopped before the failure is thrown.
 */
export async function startClusterWithSandbox(
  masters: number,
  options: PrivateRedisClusterOptions = {},
): Promise<{ cluster: PrivateRedisCluster; sandbox: Sandbox }> {
  const [cluster, sandbox] = await Promise.allSettled([
    PrivateRedisCluster.start(masters, options),
    startSandbox(),
  ]);
  if (cluster.status === 'fulfilled' && sandbox.status === 'fulfilled') {
    return { cluster: cluster.value, sandbox: sandbox.value };
  }
  if (cluster.status === 'fulfilled') await cluster.value.destroy();
  if (sandbox.status === 'fulfilled') await sandbox.value.stop();
  throw cluster.status === 'rejected' ? cluster.reason : (sandbox as PromiseRejectedResult).reason;
}

/** The environment every process of a partitioned system on `url`'s cluster shares. */
export const clusterEnv = (url: string, prefix: string, partitions: number) => ({
  REDIS_URL: url,
  REDIS_CLUSTER: 'true',
  QUEUE_PREFIX: prefix,
  QUEUE_PARTITIONS: String(partitions),
  NODE_ENV: 'development',
});
