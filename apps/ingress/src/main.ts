// Composition root of the ingress: the only place that reads the environment and builds clients.
import cluster from 'node:cluster';
import { Queue } from 'bullmq';
import { collectDefaultMetrics } from 'prom-client';
import {
  closeServer,
  configOrExit,
  createLogger,
  createRedis,
  DEFAULT_RULES,
  duplicateRedis,
  effectiveRules,
  LiveRules,
  onShutdownSignals,
  QUEUE_NAMES,
  redisHosts,
  RulesStore,
} from '@pw/shared';
import type { WebhookJobData } from '@pw/shared';
import { createApp } from './app.js';
import { clusterMetricsClient, runPrimary } from './cluster.js';
import { loadIngressConfig } from './config.js';
import { IngressMetrics } from './metrics.js';
import { WebhookIntake } from './webhook-intake.js';

const config = configOrExit('ingress', () => loadIngressConfig(process.env));
const log = createLogger({ name: 'ingress', level: config.logLevel });

if (config.workers > 1 && cluster.isPrimary) {
  for (const warning of config.warnings) log.warn(warning);
  runPrimary(config.workers, log);
} else {
  serve();
}

/** One ingress process: the whole ingress, or one of `INGRESS_WORKERS` sharing the port. */
function serve(): void {
  if (cluster.isPrimary) for (const warning of config.warnings) log.warn(warning);

  // Fail fast instead of queueing commands while Redis is away: the sender gets 503 and retries.
  const redis = createRedis(config.redisUrl, config.redisCluster, {
    enableOfflineQueue: false,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
    connectionName: 'pw-ingress',
  });
  redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
  const queue = new Queue<WebhookJobData>(QUEUE_NAMES.webhooks, {
    connection: redis,
    prefix: config.queuePrefix,
  });
  queue.on('error', (error) => log.warn({ err: error }, 'queue error'));

  // Routing rules live in Redis (the dashboard edits them); a change reaches this process at once.
  const seed = config.actions.rules ?? DEFAULT_RULES;
  const rulesStore = new RulesStore(redis, { queuePrefix: config.queuePrefix, seed });
  const rulesSubscriber = duplicateRedis(redis, { enableOfflineQueue: true });
  const liveRules = new LiveRules(rulesStore, rulesSubscriber, log, seed);
  liveRules
    .start()
    .catch((error: unknown) => log.warn({ err: error }, 'routing rules not live yet'));

  const metrics = new IngressMetrics();
  collectDefaultMetrics({ register: metrics.registry });
  const app = createApp({
    intake: new WebhookIntake(queue, config),
    // Actions disabled in ACTIONS_CONFIG stay disabled whatever the rules say.
    rules: {
      current: () => effectiveRules({ ...config.actions, rules: [...liveRules.current()] }),
    },
    redis,
    log,
    metrics,
    settings: config,
    clusterMetrics: cluster.isWorker ? clusterMetricsClient(metrics.registry) : undefined,
  });

  const server = app.listen(config.port, () => {
    log.info(
      { port: config.port, redis: redisHosts(config.redisUrl), redis_cluster: config.redisCluster },
      'ingress listening',
    );
  });
  server.on('error', (error) => {
    log.fatal({ err: error }, 'ingress cannot listen');
    process.exit(1);
  });

  onShutdownSignals(log, async (signal) => {
    log.info(
      { signal, grace_ms: config.shutdownGraceMs },
      'stopping: answering requests in flight',
    );
    await closeServer(server, config.shutdownGraceMs, log);
    await queue.close().catch(() => undefined);
    redis.disconnect();
    rulesSubscriber.disconnect();
  });
}
