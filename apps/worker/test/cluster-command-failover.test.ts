import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '@pw/shared/runtime';
import type { RedisClient } from '@pw/shared/runtime';
import { PrivateRedisCluster } from '@pw/test-utils';

// A command in flight on a master that dies, on the worker's kind of cluster connection
// (`maxRetriesPerRequest: null`, as BullMQ's fetch needs): it must settle, on the promoted replica
// or with an error its caller retries. A node connection made to reconnect kept such a command,
// and once the slots refresh dropped the dead node, never failed it: a worker's fetch waited for
// ever and its partition's jobs stayed in their wait list (docs/operations.md, Failover).

let cluster: PrivateRedisCluster;
let client: RedisClient;

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start(3, { replicas: 1, nodeTimeoutMs: 1000 });
  client = createRedis(cluster.url, true, { maxRetriesPerRequest: null });
  client.on('error', () => undefined);
}, 60_000);
afterAll(async () => {
  client?.disconnect();
  await cluster?.destroy();
});

/** A key whose slot the master on `port` serves. */
async function keyOn(port: number): Promise<string> {
  const ranges = await client.cluster('SLOTS');
  for (let i = 0; ; i++) {
    const key = `{failover-${i}}:marker`;
    const slot = Number(await client.cluster('KEYSLOT', key));
    if (ranges.some(([from, to, master]) => slot >= from && slot <= to && master?.[1] === port)) {
      return key;
    }
  }
}

describe('a command in flight when its master dies', { timeout: 90_000 }, () => {
  it('settles once the replica takes over, and the slot is served again', async () => {
    const [dead] = await cluster.masters();
    const key = await keyOn(dead!);
    // As BullMQ's fetch waits: a blocking pop with no time-out.
    let settled = false;
    const pop = client.bzpopmin(key, 0).then(
      () => 'popped',
      (error: unknown) => String(error),
    );
    void pop.finally(() => (settled = true));
    await cluster.killMaster(dead!);
    await cluster.restart(dead!);
    await expect.poll(() => settled, { timeout: 20_000, interval: 100 }).toBe(true);
    // The slot is served by the promoted replica.
    await client.zadd(key, 1, 'job');
    expect(await client.bzpopmin(key, 5)).toEqual([key, 'job', '1']);
  });
});
