// The dashboard process, from its configuration: its Redis connection, the record store (read
// only), the operator API, the console and the queue board. `main.ts` runs it from the environment
// and stops it on a signal; the end-to-end tests run it in their own process.
import { fileURLToPath } from 'node:url';
import { RecordStore, RejectedChanges } from '@pw/records';
import { CircuitBoard } from '@pw/shared/circuits';
import { retryPolicy } from '@pw/shared/config';
import { PartitionedIntake, readSenderClocks } from '@pw/shared/intake';
import { OutcomeStore } from '@pw/shared/outcomes';
import { ActionQueues, PartitionCountGuard, Partitions } from '@pw/shared/queue';
import { AuditLog } from '@pw/shared/records';
import { DEFAULT_RULES, RulesStore } from '@pw/shared/rules';
import { closeServer, createHttpServer, createRedis } from '@pw/shared/runtime';
import type { Logger, OnFatal, RunningProcess } from '@pw/shared/runtime';
import { createDashboard } from './app.js';
import type { DashboardConfig } from './config.js';
import { LoginLimit } from './login-limit.js';
import { createDashboardMetrics } from './metrics.js';
import { Operator } from './operator.js';
import { Quarantine } from './quarantine.js';
import { readTrends } from './trends.js';

/** Runs the dashboard; resolves once it listens. */
export async function runDashboard(
  config: DashboardConfig,
  log: Logger,
  fatal: OnFatal,
): Promise<RunningProcess> {
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
    maxRetriesPerRequest: 1,
    connectionName: 'pw-dashboard',
  });
  redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
  const partitions = new Partitions(config.QUEUE_PREFIX, config.QUEUE_PARTITIONS);
  // The partition count is claimed once Redis answers (a dashboard starts while Redis is away, and
  // serves what it can); work stored under another count stops it, in one line.
  const guard = new PartitionCountGuard(redis, partitions, (error) =>
    fatal(error.message, { code: error.code }),
  );
  redis.on('ready', () => void guard.ready().catch(() => undefined));
  const { app, close } = dashboardApp(config, log, redis, partitions, guard);

  const server = createHttpServer(app);
  server.on('error', (error) => fatal('dashboard cannot listen', { err: error }));
  await new Promise<void>((resolve) =>
    server.listen({ port: config.DASHBOARD_PORT, host: config.LISTEN_HOST }, resolve),
  );
  const address = `http://127.0.0.1:${config.DASHBOARD_PORT}`;
  log.info(
    {
      console: `${address}/`,
      board: `${address}/admin/queues`,
      api: `${address}/api`,
      docs: `${address}/docs/`,
      user: config.user,
      partitions: partitions.count,
    },
    'dashboard listening',
  );
  // Printed once, on the terminal only: a development convenience, never in production.
  if (config.generatedPassword) {
    process.stdout.write(
      `dashboard: log in as ${config.user} with the password ${config.password} (made up for this run)\n`,
    );
  }
  return {
    async stop(signal) {
      log.info({ signal }, 'stopping');
      await closeServer(server, config.SHUTDOWN_GRACE_MS, log);
      await close().catch(() => undefined);
      redis.disconnect();
    },
  };
}

/** The dashboard's Express app on `redis`, and what closes the clients it opened. */
function dashboardApp(
  config: DashboardConfig,
  log: Logger,
  redis: ReturnType<typeof createRedis>,
  partitions: Partitions,
  guard: PartitionCountGuard,
) {
  const prefix = config.QUEUE_PREFIX;
  // Every partition's `actions` queue and outcome records; circuits, rules and logins are shared.
  const actions = new ActionQueues(redis, partitions);
  const outcomes = partitions.prefixes.map(
    (queuePrefix) =>
      new OutcomeStore(redis, { queuePrefix, recordTtlSeconds: config.RECORD_TTL_SECONDS }),
  );
  // The record store: read only here (the recorder writes and migrates it); opened lazily by pg,
  // so a store that is down answers its routes with errors while the rest of the dashboard works.
  const records = config.DATABASE_URL
    ? RecordStore.connect({ databaseUrl: config.DATABASE_URL })
    : undefined;
  if (!records) log.warn('DATABASE_URL is unset: search, the audit log and the ledger are off');
  const rules = new RulesStore(redis, {
    queuePrefix: prefix,
    seed: config.actions.rules ?? DEFAULT_RULES,
  });
  // A released quarantined webhook is taken in as the ingress takes any: in its partition, its
  // action jobs with the deployment's retry policy. The deduplication settings play no part in a
  // release.
  const releases =
    records &&
    new PartitionedIntake(
      redis,
      partitions,
      {
        dedupWindowSeconds: 0,
        maxClockSkewSeconds: 0,
        recordTtlSeconds: config.RECORD_TTL_SECONDS,
        actionsConfig: config.actions,
        retry: retryPolicy(config),
      },
      guard,
    );
  const metrics = createDashboardMetrics(actions.all);
  const app = createDashboard({
    queues: actions.all,
    operator: new Operator({ actions, outcomes, redis, records }),
    records,
    quarantine: records && releases && new Quarantine({ intake: releases, records, rules }),
    audit: new AuditLog(redis, partitions, log),
    rejected: new RejectedChanges(redis, partitions),
    // The dashboard only reads circuits and overrides them: the breaker and its thresholds are
    // the workers'.
    circuits: new CircuitBoard(redis, { queuePrefix: prefix }),
    actions,
    rules,
    metrics: metrics.registry,
    trends: () => readTrends(redis, partitions, actions.all),
    senderClocks: () => readSenderClocks(redis, config.QUEUE_PREFIX),
    actionsConfig: config.actions,
    log,
    credentials: { user: config.user, password: config.password },
    publicUrl: config.DASHBOARD_PUBLIC_URL,
    logins: new LoginLimit(redis, prefix),
    trustProxyHops: config.DASHBOARD_TRUST_PROXY,
    consoleDir: consoleDirectory(),
  });
  const close = async () => {
    metrics.close();
    await Promise.all([actions.close(), releases?.close(), records?.close()]);
  };
  return { app, close };
}

/**
 * The console's bundle: beside the bundled app once built (apps/dashboard/dist/main.js, as in the
 * image), in apps/dashboard/dist when run from source (npm start builds it there).
 */
function consoleDirectory(): string {
  const built = import.meta.url.endsWith('/dist/main.js');
  return fileURLToPath(new URL(built ? './console' : '../dist/console', import.meta.url));
}
