import { describe, expect, it } from 'vitest';
import {
  changePartitionCount,
  claimPartitionCount,
  PARTITION_COUNT_CHANGED,
  partitionCountKey,
  PartitionCountGuard,
} from '../src/queue/partition-count.js';
import type { PartitionCountError } from '../src/queue/partition-count.js';
import { Partitions } from '../src/queue/partitions.js';
import { keys } from '../src/queue/redis-keys.js';
import { recordStreamKey } from '../src/records/record-changes.js';
import { useScriptRedis } from './script-redis.js';

const failure = async (run: Promise<unknown>) => {
  try {
    await run;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a failure');
};

describe('the stored partition count', () => {
  const context = useScriptRedis();

  it('is claimed by the first process, with a secret that keys keys the entity map of every process alike', async () => {
    const { redis, prefix } = context;
    const first = new Partitions(prefix, 4);
    expect(await claimPartitionCount(redis, first)).toBe(1);
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
    const secret = await redis.get(keys.partitionMapKey(prefix));
    expect(secret).toMatch(/^[\w-]{43}$/);
    const second = new Partitions(prefix, 4);
    expect(await claimPartitionCount(redis, second)).toBe(4);
    expect(await redis.get(keys.partitionMapKey(prefix))).toBe(secret);
    const ids = Array.from({ length: 100 }, (_, i) => `Q-${i}`);
    expect(ids.map((id) => second.ofEntity(id))).toEqual(ids.map((id) => first.ofEntity(id)));
  });

  it('refuses another count while work waits under the stored one, naming both and the steps', async () => {
    const { redis, prefix } = context;
    const four = new Partitions(prefix, 4);
    await claimPartitionCount(redis, four);
    await redis.rpush(`${four.prefix(2)}:actions:wait`, 'job-1');
    await redis.zadd(`${four.prefix(3)}:actions:failed`, 1, 'job-2');
    const error = await failure(claimPartitionCount(redis, new Partitions(prefix, 12)));
    expect(error.code).toBe(PARTITION_COUNT_CHANGED);
    expect(error.message).toContain(
      'QUEUE_PARTITIONS is 12 but Redis holds work stored under 4 partitions',
    );
    expect(error.message).toContain('1 action jobs; 1 dead letters');
    expect(error.message).toContain(
      'or drain it and change the count with `npm run partitions -- 12`',
    );
    expect(error.message).toContain('docs/operations.md#changing-the-partition-count');
    expect(error.message).not.toContain('\n');
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
  });

  it('refuses another count with no work left too: only the partitions command changes it', async () => {
    const { redis, prefix } = context;
    await claimPartitionCount(redis, new Partitions(prefix, 4));
    const error = await failure(claimPartitionCount(redis, new Partitions(prefix, 2)));
    expect(error.code).toBe(PARTITION_COUNT_CHANGED);
    expect(error.message).toBe(
      'QUEUE_PARTITIONS is 2 but the partition count stored in Redis is 4: keep QUEUE_PARTITIONS=4, or change the count with `npm run partitions -- 2` (docs/operations.md#changing-the-partition-count)',
    );
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
  });
});

describe('the partitions command', () => {
  const context = useScriptRedis();

  it('is changed by the partitions command once nothing waits under it, the secret kept', async () => {
    const { redis, prefix } = context;
    const four = new Partitions(prefix, 4);
    await claimPartitionCount(redis, four);
    const secret = await redis.get(keys.partitionMapKey(prefix));
    await redis.xadd(recordStreamKey(four.prefix(1)), '*', 'k', 'webhook');
    const error = await failure(changePartitionCount(redis, prefix, 2));
    expect(error.message).toBe(
      'the partition count stays 4, not 2: Redis holds work stored under it (1 unrecorded changes); drain it first (docs/operations.md#changing-the-partition-count)',
    );
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
    await redis.del(recordStreamKey(four.prefix(1)));
    expect(await changePartitionCount(redis, prefix, 2)).toBe(4);
    expect(await redis.get(partitionCountKey(prefix))).toBe('2');
    expect(await redis.get(keys.partitionMapKey(prefix))).toBe(secret);
    expect(await claimPartitionCount(redis, new Partitions(prefix, 2))).toBe(2);
  });

  it('keys the map of a count stored before the map had a secret only once nothing waits under it', async () => {
    const { redis, prefix } = context;
    const four = new Partitions(prefix, 4);
    await redis.set(partitionCountKey(prefix), '4');
    await redis.rpush(`${four.prefix(3)}:actions:wait`, 'job-1');
    const error = await failure(claimPartitionCount(redis, four));
    expect(error.message).toBe(
      'Redis holds work stored under 4 partitions (1 action jobs) by a partition map without a secret (a system from before it had one): drain it before starting this version, as for a change of the count (docs/operations.md#changing-the-partition-count)',
    );
    expect(await redis.get(keys.partitionMapKey(prefix))).toBeNull();
    await redis.del(`${four.prefix(3)}:actions:wait`);
    expect(await claimPartitionCount(redis, four)).toBe(4);
    expect(await redis.get(keys.partitionMapKey(prefix))).toBe(four.mapSecret);
  });

  it('counts a Redis that has none stored as one partition: the layout before partitions', async () => {
    const { redis, prefix } = context;
    await redis.rpush(`${prefix}:actions:wait`, 'job-1');
    const error = await failure(claimPartitionCount(redis, new Partitions(prefix, 4)));
    expect(error.message).toContain('stored under 1 partition (');
    expect(await claimPartitionCount(redis, new Partitions(prefix, 1))).toBe(1);
  });
});

describe('the running guard', () => {
  const context = useScriptRedis();

  it('stops a running process once another stores its own count', async () => {
    const { redis, prefix } = context;
    let guard: PartitionCountGuard | undefined;
    const refused = new Promise<PartitionCountError>((resolve) => {
      guard = new PartitionCountGuard(redis, new Partitions(prefix, 4), resolve, 20);
    });
    try {
      await guard!.ready();
      await redis.set(partitionCountKey(prefix), '12');
      const error = await refused;
      expect(error.code).toBe(PARTITION_COUNT_CHANGED);
      expect(error.message).toContain(
        'QUEUE_PARTITIONS is 4 but the partition count stored in Redis changed to 12 while this process ran: start it again with QUEUE_PARTITIONS=12',
      );
    } finally {
      guard?.close();
    }
  });

  it("stops a running process once the map's secret changes: two maps never take webhooks in", async () => {
    const { redis, prefix } = context;
    let guard: PartitionCountGuard | undefined;
    const refused = new Promise<PartitionCountError>((resolve) => {
      guard = new PartitionCountGuard(redis, new Partitions(prefix, 4), resolve, 20);
    });
    try {
      await guard!.ready();
      // Redis lost its keys, and another process claimed it again with a new secret.
      await redis.set(keys.partitionMapKey(prefix), 'another-secret');
      expect((await refused).message).toContain(
        'the secret of the partition map stored in Redis changed while this process ran',
      );
    } finally {
      guard?.close();
    }
  });
});
