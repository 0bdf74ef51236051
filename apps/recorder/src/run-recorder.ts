// The recorder process, from its configuration: its Redis connection, the record store (waited
// for while PostgreSQL does not answer), the recorder and the health server. `main.ts` runs it
// from the environment and stops it on a signal; the end-to-end tests run it in their own process.
import { hostname } from 'node:os';
import { collectDefaultMetrics } from 'prom-client';
import { isConnectionFailure, RecordStore } from '@pw/records';
import { PartitionCountGuard, Partitions } from '@pw/shared/queue';
import { createHealthServer, createRedis } from '@pw/shared/runtime';
import type { Logger, OnFatal, RunningProcess } from '@pw/shared/runtime';
import type { RecorderConfig } from './config.js';
import { RecorderMetrics } from './metrics.js';
import { Recorder } from './recorder.js';

/**
 * Runs the recorder. The returned `stop` works from the first moment: a stop asked for while Redis
 * or the store is still waited for ends the wait; `started` resolves once it records.
 */
export function runRecorder(
  config: RecorderConfig,
  log: Logger,
  fatal: OnFatal,
): RunningProcess & { started: Promise<void> } {
  const metrics = new RecorderMetrics();
  collectDefaultMetrics({ register: metrics.registry });

  // It blocks on Redis while waiting for changes, so its connection retries rather than fails.
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
    maxRetriesPerRequest: null,
    connectionName: 'pw-recorder',
  });
  redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
  const partitions = new Partitions(config.QUEUE_PREFIX, config.QUEUE_PARTITIONS);

  // A stop asked for while the store is still being waited for ends the wait, and the start.
  const stopping = { requested: false };
  let stopRunning: () => Promise<void> = () => {
    stopping.requested = true;
    redis.disconnect();
    return Promise.resolve();
  };

  const start = async () => {
    // Work stored under another partition count, now or later (another process stored its
    // count), stops this process, in one line.
    const guard = new PartitionCountGuard(redis, partitions, (error) =>
      fatal(error.message, { code: error.code }),
    );
    await guard.ready().catch((error: unknown) => {
      // A stop asked for while Redis was waited for ends the wait (its connection closed).
      if (stopping.requested) return new Promise<never>(() => undefined);
      throw error;
    });
    const store = await openStore(config, log, fatal, stopping);
    // The store answered (and is migrated): up until a write fails.
    metrics.storeUp.set(1);
    const recorder = new Recorder(
      redis,
      store,
      {
        partitions,
        consumer: `${hostname()}-${process.pid}`,
        retentionDays: config.RECORD_RETENTION_DAYS,
        recordTtlSeconds: config.RECORD_TTL_SECONDS,
      },
      log,
      metrics,
    );
    await recorder.start();
    const health = await listenForHealth(config, metrics, partitions, log, fatal);
    stopRunning = async () => {
      guard.close();
      await recorder.stop();
      health.close();
      await store.close();
      redis.disconnect();
    };
  };

  return { started: start(), stop: () => stopRunning() };
}

async function listenForHealth(
  config: RecorderConfig,
  metrics: RecorderMetrics,
  partitions: Partitions,
  log: Logger,
  fatal: OnFatal,
) {
  const health = createHealthServer(metrics.registry);
  health.on('error', (error) => fatal('recorder cannot listen on its health port', { err: error }));
  await new Promise<void>((resolve) =>
    health.listen({ port: config.RECORDER_HEALTH_PORT, host: config.LISTEN_HOST }, resolve),
  );
  log.info(
    {
      health_port: config.RECORDER_HEALTH_PORT,
      retention_days: config.RECORD_RETENTION_DAYS,
      partitions: partitions.count,
    },
    'recorder running',
  );
  return health;
}

/**
 * The store, migrated; a PostgreSQL that does not answer yet is waited for (the backlog waits in
 * Redis meanwhile). A store that answers and refuses (a changed migration, a missing schema, no
 * migration files) stops the start: waiting would not mend it.
 */
async function openStore(
  config: RecorderConfig,
  log: Logger,
  fatal: OnFatal,
  stopping: { requested: boolean },
): Promise<RecordStore> {
  for (let tries = 1; ; tries += 1) {
    if (stopping.requested) return new Promise<never>(() => undefined);
    try {
      return await RecordStore.open({ databaseUrl: config.DATABASE_URL });
    } catch (error) {
      if (!isConnectionFailure(error)) {
        fatal('the record store cannot be opened', { err: error });
        return new Promise<never>(() => undefined);
      }
      if (tries === 1 || tries % 10 === 0) {
        log.warn({ err: error, tries }, 'the record store cannot be opened yet: trying again');
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * tries)));
    }
  }
}
