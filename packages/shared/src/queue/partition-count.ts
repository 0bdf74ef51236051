import { PwError } from '../errors.js';
import type { FailureCode } from '../errors.js';
import { luaCommand } from '../lua/lua-script.js';
import { SHARED_LUA } from '../lua/lua-files.js';
import { withCommand } from '../redis.js';
import type { RedisClient } from '../redis.js';
import { Partitions } from './partitions.js';
import { QUEUE_NAMES } from './queues.js';
import { keys } from './redis-keys.js';

/** The code of a `PartitionCountError`. */
export const PARTITION_COUNT_CHANGED = 'partition_count_changed' satisfies FailureCode;

/** Where the partition count in use is stored (under the shared prefix). */
export const partitionCountKey = (queuePrefix: string): string => keys.partitionCount(queuePrefix);

/** The docs' steps to change the partition count. */
export const PARTITION_DRAIN_DOCS = 'docs/operations.md#changing-the-partition-count';

/** Redis holds work under another partition count than this process's: it must not start. */
export class PartitionCountError extends PwError<typeof PARTITION_COUNT_CHANGED> {
  override name = 'PartitionCountError';

  constructor(
    readonly stored: number,
    readonly configured: number,
    readonly work: string,
  ) {
    super(
      PARTITION_COUNT_CHANGED,
      `QUEUE_PARTITIONS is ${configured} but Redis holds work stored under ${stored} partition${stored === 1 ? '' : 's'} (${work}): keep QUEUE_PARTITIONS=${stored}, or stop the ingress, let the workers and the recorder drain every partition, replay or discard the dead letters, then start with ${configured} (${PARTITION_DRAIN_DOCS})`,
    );
  }
}

const PARTITION_COUNT = luaCommand({
  name: 'pwPartitionCount',
  file: 'partition-count-1.lua',
  sources: [SHARED_LUA],
});

interface CountCommands {
  pwPartitionCount(key: string, count: number, expected: string): Promise<string>;
}

/**
 * What waits in a partition of `prefix`: its action jobs not yet finished or failed for good (dead
 * letters), and record changes the recorder has not written. An empty string when nothing does.
 */
async function workIn(redis: RedisClient, prefix: string): Promise<string> {
  const queue = keys.queue(prefix, QUEUE_NAMES.actions);
  const [wait, paused, active, delayed, prioritized, failed, changes] = await Promise.all([
    redis.llen(queue.wait!),
    redis.llen(queue.paused!),
    redis.llen(queue.active!),
    redis.zcard(queue.delayed!),
    redis.zcard(queue.prioritized!),
    redis.zcard(queue.failed!),
    redis.xlen(keys.records(prefix)),
  ]);
  const jobs = wait + paused + active + delayed + prioritized;
  const parts = [
    jobs > 0 ? `${jobs} action jobs` : '',
    failed > 0 ? `${failed} dead letters` : '',
    changes > 0 ? `${changes} unrecorded changes` : '',
  ];
  return parts.filter(Boolean).join(', ');
}

/**
 * Checks, at start, that Redis holds no work stored under another partition count than
 * `partitions.count` (none stored: one partition, the layout before partitions existed), and
 * stores this count. A different count with no work left under it is replaced; with work left, a
 * `PartitionCountError` says both counts and how to drain. Returns the count found stored.
 */
export async function claimPartitionCount(
  redis: RedisClient,
  partitions: Partitions,
): Promise<number> {
  const client = withCommand<CountCommands>(redis, PARTITION_COUNT);
  const key = partitionCountKey(partitions.shared);
  const found = await redis.get(key);
  const stored = found === null ? 1 : Number(found);
  if (stored !== partitions.count) {
    const before = new Partitions(partitions.shared, stored);
    const work = (await Promise.all(before.prefixes.map((prefix) => workIn(redis, prefix))))
      .filter(Boolean)
      .join('; ');
    if (work) throw new PartitionCountError(stored, partitions.count, work);
  }
  const now = await client.pwPartitionCount(key, partitions.count, found ?? '');
  if (Number(now) !== partitions.count) {
    // Another process took an empty Redis over with its count between our read and our write.
    throw new PartitionCountError(Number(now), partitions.count, 'another process claimed it');
  }
  return stored;
}

/**
 * `claimPartitionCount` once per process, before its first use of the partitions: `ready()`
 * resolves once the count is claimed, and rejects while Redis cannot be asked (it is asked again
 * at the next call). A refusal is final: `onRefused` hears it (a process logs it and exits). Once
 * claimed, the stored count is read again every `watchMs`: a process started with another count
 * once the Redis was drained (a deployment changing the count without stopping this one first)
 * stops this one too, so that two counts never take webhooks in side by side.
 */
export class PartitionCountGuard {
  private claimed: Promise<void> | undefined;
  private watching: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly partitions: Partitions,
    private readonly onRefused: (error: PartitionCountError) => void,
    private readonly watchMs = 5000,
  ) {}

  ready(): Promise<void> {
    this.claimed ??= claimPartitionCount(this.redis, this.partitions).then(
      () => this.watch(),
      (error: unknown) => {
        if (error instanceof PartitionCountError) this.onRefused(error);
        else this.claimed = undefined;
        throw error;
      },
    );
    return this.claimed;
  }

  /** Stops reading the stored count again. */
  close(): void {
    clearInterval(this.watching);
  }

  private watch(): void {
    const key = partitionCountKey(this.partitions.shared);
    this.watching = setInterval(() => {
      this.redis.get(key).then(
        (stored) => {
          if (stored === null || Number(stored) === this.partitions.count) return;
          this.close();
          this.onRefused(
            new PartitionCountError(
              Number(stored),
              this.partitions.count,
              'another process stored its count while this one ran',
            ),
          );
        },
        // Redis away: read again at the next turn.
        () => undefined,
      );
    }, this.watchMs).unref();
  }
}
