// Composition root of the recorder: reads the environment, builds clients, runs the recorder.
import { hostname } from 'node:os';
import { collectDefaultMetrics } from 'prom-client';
import { isConnectionFailure, RecordStore } from '@pw/records';
import { configOrExit } from '@pw/shared/config';
import { PartitionCountGuard, Partitions } from '@pw/shared/queue';
import {
  createHealthServer,
  createLogger,
  createRedis,
  onShutdownSignals,
} from '@pw/shared/runtime';
import { loadRecorderConfig } from './config.js';
import { RecorderMetrics } from './metrics.js';
import { Recorder } from './recorder.js';

const config = configOrExit('recorder', () => loadRecorderConfig(process.env));
const log = createLogger({ name: 'recorder', level: config.LOG_LEVEL });
const metrics = new RecorderMetrics();
collectDefaultMetrics({ register: metrics.registry });

// It blocks on Redis while waiting for changes, so its connection retries rather than fails.
const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
  maxRetriesPerRequest: null,
  connectionName: 'pw-recorder',
});
redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
const partitions = new Partitions(config.QUEUE_PREFIX, config.QUEUE_PARTITIONS);

// A stop asked for while the store is still being waited for ends the wait, and the process.
let stopRequested = false;
let stopRunning: () => Promise<void> = () => {
  stopRequested = true;
  redis.disconnect();
  return Promise.resolve();
};
onShutdownSignals(log, (signal) => {
  log.info({ signal }, 'stopping: finishing the batch in hand');
  return stopRunning();
});

// Work stored under another partition count, now or later (another process stored its count),
// stops this process, in one line.
const guard = new PartitionCountGuard(redis, partitions, (error) => {
  log.fatal({ code: error.code }, error.message);
  process.exit(1);
});
await guard.ready().catch((error: unknown) => {
  // A stop asked for while Redis was waited for ends the wait (its connection closed).
  if (stopRequested) return new Promise<never>(() => undefined);
  throw error;
});

const store = await openStore();
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

const health = createHealthServer(metrics.registry);
health.listen(config.RECORDER_HEALTH_PORT, () => {
  log.info(
    {
      health_port: config.RECORDER_HEALTH_PORT,
      retention_days: config.RECORD_RETENTION_DAYS,
      partitions: partitions.count,
    },
    'recorder running',
  );
});
health.on('error', (error) => {
  log.fatal({ err: error }, 'recorder cannot listen on its health port');
  process.exit(1);
});

stopRunning = async () => {
  guard.close();
  await recorder.stop();
  health.close();
  await store.close();
  redis.disconnect();
};

/**
 * The store, migrated; a PostgreSQL that does not answer yet is waited for (the backlog waits in
 * Redis meanwhile). A store that answers and refuses (a changed migration, a missing schema, no
 * migration files) stops the start: waiting would not mend it.
 */
async function openStore(): Promise<RecordStore> {
  for (let tries = 1; ; tries += 1) {
    if (stopRequested) return new Promise<never>(() => undefined);
    try {
      return await RecordStore.open({ databaseUrl: config.DATABASE_URL });
    } catch (error) {
      if (!isConnectionFailure(error)) {
        log.fatal({ err: error }, 'the record store cannot be opened');
        process.exit(1);
      }
      if (tries === 1 || tries % 10 === 0) {
        log.warn({ err: error, tries }, 'the record store cannot be opened yet: trying again');
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * tries)));
    }
  }
}
