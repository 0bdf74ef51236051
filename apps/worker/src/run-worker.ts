// The worker process, from its configuration: its Redis connections, the partner API client, the
// action workers and the health server. `main.ts` runs it from the environment and stops it on a
// signal; the end-to-end tests run it in their own process.
import { collectDefaultMetrics } from 'prom-client';
import { TokenManager } from '@pw/shared/auth';
import { OutcomeStore } from '@pw/shared/outcomes';
import { PartitionCountGuard } from '@pw/shared/queue';
import { createHealthServer, createRedis } from '@pw/shared/runtime';
import type { Logger, OnFatal, RunningProcess } from '@pw/shared/runtime';
import type { WorkerConfig } from './config.js';
import { WORKER_REDIS_OPTIONS, createWorker } from './create-worker.js';
import { WorkerMetrics } from './metrics.js';
import { PartnerApi } from './partner-api.js';

/** Runs the worker; resolves once it takes jobs. */
export async function runWorker(
  config: Readonly<WorkerConfig>,
  log: Logger,
  fatal: OnFatal,
): Promise<RunningProcess> {
  const metrics = new WorkerMetrics();
  collectDefaultMetrics({ register: metrics.registry });

  const connection = connect(config, log);

  // Healthy from the start, as before partitions: the claim below waits for Redis, however long.
  // Ready (`/readyz`) once it takes jobs.
  let running = false;
  const health = createHealthServer(metrics.registry, () => running);
  const listening = new Promise<void>((resolve) =>
    health.listen({ port: config.WORKER_HEALTH_PORT, host: config.LISTEN_HOST }, resolve),
  );
  health.on('error', (error) => fatal('worker cannot listen on its health port', { err: error }));

  // Work stored under another partition count, now or later (another process stored its count),
  // stops this process, in one line.
  const guard = new PartitionCountGuard(connection, config.partitions, (error) =>
    fatal(error.message),
  );
  await guard.ready();

  const api = partnerApi(config, log, metrics);
  const worker = createWorker({
    connection,
    partitions: config.partitions,
    workerPartitions: config.workerPartitions,
    // One store per partition: a webhook's record lives in its partition.
    outcomes: config.partitions.prefixes.map(
      (queuePrefix) =>
        new OutcomeStore(connection, { queuePrefix, recordTtlSeconds: config.RECORD_TTL_SECONDS }),
    ),
    api,
    targets: config.targets,
    actionsConfig: config.actions,
    log,
    metrics,
    concurrency: config.WORKER_CONCURRENCY,
    lockMs: config.WORKER_LOCK_MS,
    circuit: {
      failureThreshold: config.CIRCUIT_FAILURE_THRESHOLD,
      probeIntervalMs: config.CIRCUIT_PROBE_INTERVAL_MS,
    },
  });

  await listening;
  logRunning(config, log);
  running = true;

  return {
    stop: (signal) =>
      stopWorker(signal, { config, log, worker, api }, () => {
        health.close();
        guard.close();
        connection.disconnect();
      }),
  };
}

/**
 * The worker's Redis connection: BullMQ's and its stores', one connection so that a call's end
 * reaches Redis ahead of its job's move, auto-pipelined so that the two leave in one write
 * (docs/redis-cost.md).
 */
function connect(config: Readonly<WorkerConfig>, log: Logger) {
  const connection = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
    ...WORKER_REDIS_OPTIONS,
    connectionName: 'pw-worker',
  });
  connection.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
  return connection;
}

function logRunning(config: Readonly<WorkerConfig>, log: Logger): void {
  log.info(
    {
      health_port: config.WORKER_HEALTH_PORT,
      concurrency: config.WORKER_CONCURRENCY,
      partitions:
        config.workerPartitions.length === config.partitions.count
          ? `all ${config.partitions.count}`
          : config.workerPartitions.join(','),
      api: config.API_BASE_URL,
      auth: `${config.AUTH_URL} realm ${config.AUTH_REALM}`,
      markets: [...config.targets.byMarket.keys()],
    },
    'worker running',
  );
}

/** The partner API's client, with its token manager. */
function partnerApi(config: Readonly<WorkerConfig>, log: Logger, metrics: WorkerMetrics) {
  const tokens = new TokenManager({
    onRequest: (outcome, credentials) => {
      metrics.tokenRequests.inc({ outcome });
      log.debug(
        { outcome, realm: credentials.realm, client_id: credentials.clientId },
        'token request',
      );
    },
  });
  const api = new PartnerApi({
    tokens,
    timeoutMs: config.API_TIMEOUT_MS,
    connections: config.WORKER_CONCURRENCY,
  });
  return api;
}

/**
 * Lets the active jobs finish for the grace period, then leaves the unfinished ones to another
 * worker; then closes the clients.
 */
async function stopWorker(
  signal: string,
  running: {
    config: Readonly<WorkerConfig>;
    log: Logger;
    worker: ReturnType<typeof createWorker>;
    api: PartnerApi;
  },
  closeClients: () => void,
): Promise<void> {
  const { config, log, worker, api } = running;
  log.info({ signal, grace_ms: config.SHUTDOWN_GRACE_MS }, 'stopping: letting active jobs finish');
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), config.SHUTDOWN_GRACE_MS);
  });
  const result = await Promise.race([worker.close(), graceOver]);
  clearTimeout(timer);
  if (result === 'timeout') {
    log.warn('grace period over: leaving the unfinished jobs to be taken over by another worker');
    await worker.close(true);
  }
  await api.close();
  closeClients();
}
