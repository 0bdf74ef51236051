// The partitions command, `npm run partitions -- [COUNT]` (in an image:
// `node apps/dashboard/dist/main.js partitions [COUNT]`): without a count it says the partition
// count stored in Redis and what waits under it; with one it changes the stored count, once nothing
// waits under the old one (docs/operations.md#changing-the-partition-count). It is the only way the
// count changes: a process started with another count refuses to start.
import { userInfo } from 'node:os';
import { z } from 'zod';
import { commonEnv, configOrExit, loadConfig, withCommonChecks } from '@pw/shared/config';
import {
  changePartitionCount,
  MAX_QUEUE_PARTITIONS,
  PartitionCountError,
  partitionWork,
  Partitions,
  storedCount,
} from '@pw/shared/queue';
import { AuditLog } from '@pw/shared/records';
import { createLogger, createRedis } from '@pw/shared/runtime';

const USAGE = `usage: npm run partitions -- [COUNT] (COUNT: 1 to ${MAX_QUEUE_PARTITIONS})`;

/** Who ran the command, for the audit log. */
function operator(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Runs the command with `args` (after `partitions`); prints to `out`; the exit code. */
export async function runPartitionsCommand(
  args: readonly string[],
  env: Record<string, string | undefined>,
  out: (line: string) => void,
): Promise<number> {
  const wanted = args[0] === undefined ? undefined : Number(args[0]);
  if (
    args.length > 1 ||
    (wanted !== undefined &&
      !(Number.isInteger(wanted) && wanted >= 1 && wanted <= MAX_QUEUE_PARTITIONS))
  ) {
    out(USAGE);
    return 2;
  }
  // A variable it cannot use: one line naming it, exit 1.
  const config = configOrExit('partitions', () =>
    loadConfig(withCommonChecks(z.object(commonEnv)), env),
  );
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
    maxRetriesPerRequest: 1,
    connectionName: 'pw-partitions',
  });
  redis.on('error', () => undefined);
  try {
    if (wanted === undefined) {
      const { stored } = await storedCount(redis, config.QUEUE_PREFIX);
      const work = await partitionWork(redis, config.QUEUE_PREFIX, stored);
      out(
        `the partition count stored in Redis is ${stored} (QUEUE_PARTITIONS here: ${config.QUEUE_PARTITIONS}); waiting under it: ${work || 'nothing'}`,
      );
      return 0;
    }
    const from = await changePartitionCount(redis, config.QUEUE_PREFIX, wanted);
    if (from !== wanted) {
      const log = createLogger({ name: 'partitions', level: config.LOG_LEVEL });
      const audit = new AuditLog(redis, new Partitions(config.QUEUE_PREFIX, wanted), log);
      await audit.record(
        {
          user: operator(),
          action: 'partition_count',
          target: 'QUEUE_PARTITIONS',
          details: { from, to: wanted },
        },
        'partition count changed',
      );
    }
    out(
      from === wanted
        ? `the partition count stored in Redis is ${wanted} already`
        : `the partition count stored in Redis is now ${wanted} (was ${from}): processes still running with ${from} stop within 5 s; start every process with QUEUE_PARTITIONS=${wanted}`,
    );
    return 0;
  } catch (error) {
    out(
      error instanceof PartitionCountError ? error.message : `Redis: ${(error as Error).message}`,
    );
    return 1;
  } finally {
    redis.disconnect();
  }
}
