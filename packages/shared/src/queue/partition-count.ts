import { randomBytes } from 'node:crypto';
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

/** The command that changes the partition count (docs/operations.md). */
export const partitionsCommand = (count: number): string => `npm run partitions -- ${count}`;

/**
 * This process's partition count is not the one stored in Redis, or the partitions command cannot
 * change it yet: one line naming both counts and what to do.
 */
export class PartitionCountError extends PwError<typeof PARTITION_COUNT_CHANGED> {
  override name = 'PartitionCountError';

  private constructor(
    readonly stored: number,
    readonly configured: number,
    message: string,
  ) {
    super(PARTITION_COUNT_CHANGED, message);
  }

  /** A process started with `configured` finds `stored` in Redis, and `work` under it (or none). */
  static atStart(stored: number, configured: number, work: string): PartitionCountError {
    const found = work
      ? `Redis holds work stored under ${plural(stored)} (${work})`
      : `the partition count stored in Redis is ${stored}`;
    const change = `${work ? 'or drain it and change' : 'or change'} the count with \`${partitionsCommand(configured)}\``;
    return new PartitionCountError(
      stored,
      configured,
      `QUEUE_PARTITIONS is ${configured} but ${found}: keep QUEUE_PARTITIONS=${stored}, ${change} (${PARTITION_DRAIN_DOCS})`,
    );
  }

  /** The partitions command changed the count to `stored` while this process ran. */
  static whileRunning(stored: number, configured: number): PartitionCountError {
    return new PartitionCountError(
      stored,
      configured,
      `QUEUE_PARTITIONS is ${configured} but the partition count stored in Redis changed to ${stored} while this process ran: start it again with QUEUE_PARTITIONS=${stored} (${PARTITION_DRAIN_DOCS})`,
    );
  }

  /**
   * The map's secret in Redis is not the one this process maps by (Redis lost its keys, and another
   * process made a new one): two maps must not take webhooks in side by side.
   */
  static secretChanged(count: number): PartitionCountError {
    return new PartitionCountError(
      count,
      count,
      `the secret of the partition map stored in Redis changed while this process ran (Redis lost its keys?): start it again, so that every process maps entities alike (${PARTITION_DRAIN_DOCS})`,
    );
  }

  /**
   * Work waits under `stored` partitions, placed by the map of a system from before the map had a
   * secret: keying it now would move entities from their partitions.
   */
  static unkeyed(stored: number, work: string): PartitionCountError {
    return new PartitionCountError(
      stored,
      stored,
      `Redis holds work stored under ${plural(stored)} (${work}) by a partition map without a secret (a system from before it had one): drain it before starting this version, as for a change of the count (${PARTITION_DRAIN_DOCS})`,
    );
  }

  /** The partitions command cannot change `stored` to `wanted`: `reason`. */
  static notChanged(stored: number, wanted: number, reason: string): PartitionCountError {
    return new PartitionCountError(
      stored,
      wanted,
      `the partition count stays ${stored}, not ${wanted}: ${reason} (${PARTITION_DRAIN_DOCS})`,
    );
  }
}

const plural = (count: number) => `${count} partition${count === 1 ? '' : 's'}`;

const PARTITION_COUNT = luaCommand({
  name: 'pwPartitionCount',
  file: 'partition-count-2.lua',
  sources: [SHARED_LUA],
});

interface CountCommands {
  pwPartitionCount(
    countKey: string,
    mapKey: string,
    count: number,
    expected: string,
    secret: string,
  ): Promise<[string, string?]>;
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
 * What waits under `count` partitions of `shared` (action jobs, dead letters, unrecorded changes),
 * every partition's in one string; empty when nothing does.
 */
export async function partitionWork(
  redis: RedisClient,
  shared: string,
  count: number,
): Promise<string> {
  const layout = new Partitions(shared, count);
  const work = await Promise.all(layout.prefixes.map((prefix) => workIn(redis, prefix)));
  return work.filter(Boolean).join('; ');
}

/** The stored count as it is (null: none), and as it counts (none: one partition). */
export async function storedCount(redis: RedisClient, shared: string) {
  const found = await redis.get(partitionCountKey(shared));
  return { found, stored: found === null ? 1 : Number(found) };
}

/** Stores `count` where `expected` ('' for nothing) is stored: the count after, and the secret. */
function storeCount(redis: RedisClient, shared: string, count: number, expected: string) {
  return withCommand<CountCommands>(redis, PARTITION_COUNT).pwPartitionCount(
    partitionCountKey(shared),
    keys.partitionMapKey(shared),
    count,
    expected,
    randomBytes(32).toString('base64url'),
  );
}

/**
 * Checks, at start, that the partition count stored in Redis is `partitions.count`, and keys the
 * entity-to-partition map with the secret kept beside it. A Redis with none stored is claimed
 * (the first process of a system stores its count and makes the secret), unless it holds work in
 * the layout of one partition (a system from before partitions) and the count is another. Any
 * other count is refused with a `PartitionCountError`: only the partitions command changes it
 * (`changePartitionCount`). Returns the count found stored (none: 1).
 */
export async function claimPartitionCount(
  redis: RedisClient,
  partitions: Partitions,
): Promise<number> {
  const { found, stored } = await storedCount(redis, partitions.shared);
  if (stored !== partitions.count) {
    const work = await partitionWork(redis, partitions.shared, stored);
    if (work || found !== null) throw PartitionCountError.atStart(stored, partitions.count, work);
  } else if (stored > 1 && (await redis.get(keys.partitionMapKey(partitions.shared))) === null) {
    // A count stored before the map had a secret: its work was placed by the unkeyed map.
    const work = await partitionWork(redis, partitions.shared, stored);
    if (work) throw PartitionCountError.unkeyed(stored, work);
  }
  const [now, secret] = await storeCount(redis, partitions.shared, partitions.count, '');
  // Another process claimed an empty Redis with its count between our read and our write.
  if (secret === undefined) throw PartitionCountError.atStart(Number(now), partitions.count, '');
  partitions.keyMap(secret);
  return stored;
}

/**
 * The partitions command: changes the stored count to `count` once no work waits under the stored
 * one (the map's secret stays). Processes running with the old count stop within their guard's
 * `watchMs`. Returns the count it replaced; a `PartitionCountError` when work waits, or when
 * another change came first.
 */
export async function changePartitionCount(
  redis: RedisClient,
  shared: string,
  count: number,
): Promise<number> {
  const { found, stored } = await storedCount(redis, shared);
  if (stored !== count) {
    const work = await partitionWork(redis, shared, stored);
    if (work) {
      throw PartitionCountError.notChanged(
        stored,
        count,
        `Redis holds work stored under it (${work}); drain it first`,
      );
    }
  }
  const [now] = await storeCount(redis, shared, count, found ?? '');
  if (Number(now) !== count) {
    throw PartitionCountError.notChanged(Number(now), count, 'another change came first');
  }
  return stored;
}

/**
 * `claimPartitionCount` once per process, before its first use of the partitions: `ready()`
 * resolves once the count is claimed (and the entity map keyed), and rejects while Redis cannot be
 * asked (it is asked again at the next call). A refusal is final: `onRefused` hears it (a process
 * logs it and exits). Once claimed, the stored count is read again every `watchMs`: when the
 * partitions command has changed it, this process stops, so that two counts never take webhooks
 * in side by side.
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
    const { shared, count } = this.partitions;
    this.watching = setInterval(() => {
      Promise.all([
        this.redis.get(partitionCountKey(shared)),
        this.redis.get(keys.partitionMapKey(shared)),
      ]).then(
        ([stored, secret]) => {
          const error =
            stored !== null && Number(stored) !== count
              ? PartitionCountError.whileRunning(Number(stored), count)
              : secret !== null && secret !== this.partitions.mapSecret
                ? PartitionCountError.secretChanged(count)
                : undefined;
          if (!error) return;
          this.close();
          this.onRefused(error);
        },
        // Redis away: read again at the next turn.
        () => undefined,
      );
    }, this.watchMs).unref();
  }
}
