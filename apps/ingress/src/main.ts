// Composition root of the ingress: the only place that reads the environment and builds clients.
import cluster from 'node:cluster';
import type { RequestListener } from 'node:http';
import { Queue } from 'bullmq';
import { collectDefaultMetrics } from 'prom-client';
import {
  closeServer,
  configOrExit,
  createHttpServer,
  createLogger,
  createRedis,
  DEFAULT_RULES,
  duplicateRedis,
  IngressCounts,
  effectiveRules,
  LiveRules,
  onShutdownSignals,
  OutcomeStore,
  QUEUE_NAMES,
  QUEUE_STREAMS,
  redisHosts,
  retryPolicy,
  RulesStore,
  WebhookIntake,
} from '@pw/shared';
import type { ActionJobData, RedisClient } from '@pw/shared';
import { createApp } from './app.js';
import { clusterMetricsClient, runPrimary } from './cluster.js';
import { loadIngressConfig } from './config.js';
import { IngressMetrics } from './metrics.js';
import { BatchedIntake } from './batched-intake.js';

const config = configOrExit('ingress', () => loadIngressConfig(process.env));
const log = createLogger({ name: 'ingress', level: config.LOG_LEVEL });

if (config.INGRESS_WORKERS > 1 && cluster.isPrimary) {
  for (const warning of config.warnings) log.warn(warning);
  runPrimary(config.INGRESS_WORKERS, log);
} else {
  serve();
}

/** One ingress process: the whole ingress, or one of `INGRESS_WORKERS` sharing the port. */
function serve(): void {
  if (cluster.isPrimary) for (const warning of config.warnings) log.warn(warning);

  // Fail fast instead of queueing commands while Redis is away: the sender gets 503 and retries.
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
    enableOfflineQueue: false,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
    connectionName: 'pw-ingress',
  });
  redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
  // The queue the intake adds each webhook's action jobs to.
  const queue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection: redis,
    prefix: config.QUEUE_PREFIX,
    streams: QUEUE_STREAMS,
  });
  queue.on('error', (error) => log.warn({ err: error }, 'queue error'));

  const { rules, rulesSubscriber } = liveRoutingRules(redis);

  const outcomes = new OutcomeStore(redis, {
    queuePrefix: config.QUEUE_PREFIX,
    recordTtlSeconds: config.RECORD_TTL_SECONDS,
  });
  const metrics = new IngressMetrics();
  collectDefaultMetrics({ register: metrics.registry });
  const counts = new IngressCounts(redis, config.QUEUE_PREFIX);
  const app = createApp({
    intake: new BatchedIntake(
      new WebhookIntake(queue, outcomes, {
        queuePrefix: config.QUEUE_PREFIX,
        dedupWindowSeconds: config.DEDUP_WINDOW_SECONDS,
        maxClockSkewSeconds: config.MAX_CLOCK_SKEW_SECONDS,
        recordTtlSeconds: config.RECORD_TTL_SECONDS,
        actionsConfig: config.actions,
        retry: retryPolicy(config),
      }),
    ),
    rules,
    redis,
    log,
    metrics,
    counts,
    settings: {
      webhookSecrets: config.webhookSecrets,
      signatureMode: config.signatureMode,
      maxBodyBytes: config.MAX_BODY_BYTES,
      rateLimitPerSecond: config.INGRESS_RATE_LIMIT,
      maxClockSkewSeconds: config.MAX_CLOCK_SKEW_SECONDS,
      dedupWindowSeconds: config.DEDUP_WINDOW_SECONDS,
    },
    clusterMetrics: cluster.isWorker ? clusterMetricsClient(metrics.registry) : undefined,
  });

  listen(app, async () => {
    await counts.close();
    await queue.close().catch(() => undefined);
    redis.disconnect();
    rulesSubscriber.disconnect();
  });
}

/**
 * The routing rules, live: they are kept in Redis (the dashboard edits them) and a change reaches
 * this process at once. Actions disabled in ACTIONS_CONFIG stay disabled whatever the rules say.
 */
function liveRoutingRules(redis: RedisClient) {
  const seed = config.actions.rules ?? DEFAULT_RULES;
  const rulesStore = new RulesStore(redis, { queuePrefix: config.QUEUE_PREFIX, seed });
  const rulesSubscriber = duplicateRedis(redis, { enableOfflineQueue: true });
  const liveRules = new LiveRules(rulesStore, rulesSubscriber, log, seed);
  liveRules
    .start()
    .catch((error: unknown) => log.warn({ err: error }, 'routing rules not live yet'));
  const rules = {
    current: () => effectiveRules({ ...config.actions, rules: [...liveRules.current()] }),
  };
  return { rules, rulesSubscriber };
}

/** Serves `app` on INGRESS_PORT until SIGTERM or SIGINT, then answers what is in flight. */
function listen(app: RequestListener, closeClients: () => Promise<void>): void {
  const server = createHttpServer(app).listen(config.INGRESS_PORT, () => {
    log.info(
      {
        port: config.INGRESS_PORT,
        redis: redisHosts(config.REDIS_URL),
        redis_cluster: config.REDIS_CLUSTER,
      },
      'ingress listening',
    );
  });
  server.on('error', (error) => {
    log.fatal({ err: error }, 'ingress cannot listen');
    process.exit(1);
  });

  onShutdownSignals(log, async (signal) => {
    log.info(
      { signal, grace_ms: config.SHUTDOWN_GRACE_MS },
      'stopping: answering requests in flight',
    );
    await closeServer(server, config.SHUTDOWN_GRACE_MS, log);
    await closeClients();
  });
}
