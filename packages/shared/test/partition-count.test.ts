import { describe, expect, it } from 'vitest';
import {
  claimPartitionCount,
  PARTITION_COUNT_CHANGED,
  partitionCountKey,
  PartitionCountGuard,
} from '../src/queue/partition-count.js';
import type { PartitionCountError } from '../src/queue/partition-count.js';
import { Partitions } from '../src/queue/partitions.js';
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

  it('is claimed by the first process, and a process with the same count starts', async () => {
    const { redis, prefix } = context;
    expect(await claimPartitionCount(redis, new Partitions(prefix, 4))).toBe(1);
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
    expect(await claimPartitionCount(redis, new Partitions(prefix, 4))).toBe(4);
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
    expect(error.message).toContain('docs/operations.md#changing-the-partition-count');
    expect(error.message).not.toContain('\n');
    expect(await redis.get(partitionCountKey(prefix))).toBe('4');
  });

  it('takes over once the old partitions are drained', async () => {
    const { redis, prefix } = context;
    const four = new Partitions(prefix, 4);
    await claimPartitionCount(redis, four);
    await redis.xadd(recordStreamKey(four.prefix(1)), '*', 'k', 'webhook');
    expect(
      (await failure(claimPartitionCount(redis, new Partitions(prefix, 2)))).message,
    ).toContain('1 unrecorded changes');
    await redis.del(recordStreamKey(four.prefix(1)));
    expect(await claimPartitionCount(redis, new Partitions(prefix, 2))).toBe(4);
    expect(await redis.get(partitionCountKey(prefix))).toBe('2');
  });

  it('counts a Redis that has none stored as one partition: the layout before partitions', async () => {
    const { redis, prefix } = context;
    await redis.rpush(`${prefix}:actions:wait`, 'job-1');
    const error = await failure(claimPartitionCount(redis, new Partitions(prefix, 4)));
    expect(error.message).toContain('stored under 1 partition (');
    expect(await claimPartitionCount(redis, new Partitions(prefix, 1))).toBe(1);
  });

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
        'QUEUE_PARTITIONS is 4 but Redis holds work stored under 12 partitions (another process stored its count while this one ran)',
      );
    } finally {
      guard?.close();
    }
  });
});
