// One ingress process, from its configuration: the whole ingress, or one of `INGRESS_WORKERS`
// sharing the port. `main.ts` runs it from the environment and stops it on a signal; the
// end-to-end tests run it in their own process.
import cluster from 'node:cluster';
import { collectDefaultMetrics } from 'prom-client';
import { retryPolicy } from '@pw/shared/config';
import {
  PartitionedIntake,
  publishSenderClocks,
  readSenderClocks,
  SENDER_CLOCKS_PUBLISH_MS,
  SenderClocks,
} from '@pw/shared/intake';
import { PartitionCountGuard, Partitions } from '@pw/shared/queue';
import { IngressCounts } from '@pw/shared/records';
import { closeServer, createHttpServer, createRedis, redisHosts } from '@pw/shared/runtime';
import type { Logger, OnFatal, RedisClient, RunningProcess } from '@pw/shared/runtime';
import { createApp } from './app.js';
import { clusterMetricsClient } from './cluster.js';
import type { IngressConfig } from './config.js';
import { liveRoutingRules } from './live-rules.js';
import { IngressMetrics } from './metrics.js';
import { BatchedIntake } from './batched-intake.js';

/** Runs the ingress; resolves once it listens. */
export async function runIngress(
  config: IngressConfig,
  log: Logger,
  fatal: OnFatal,
): Promise<RunningProcess> {
  // Fail fast instead of queueing commands while Redis is away: the sender gets 503 and retries.
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, {
    enableOfflineQueue: false,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
    connectionName: 'pw-ingress',
  });
  redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error'));
  const partitions = new Partitions(config.QUEUE_PREFIX, config.QUEUE_PARTITIONS);
  const guard = new PartitionCountGuard(redis, partitions, (error) => fatal(error.message));
  // Asked at start, so a count that does not match stops the process at once; while Redis is
  // away, asked again before each intake (whose senders meanwhile get 503).
  redis.once('ready', () => void guard.ready().catch(() => undefined));
  const intake = partitionedIntake(config, redis, partitions, guard, log);

  const { rules, subscriber: rulesSubscriber } = liveRoutingRules(
    redis,
    { queuePrefix: config.QUEUE_PREFIX, actions: config.actions },
    log,
  );

  const metrics = new IngressMetrics();
  collectDefaultMetrics({ register: metrics.registry });
  // Refusals and repeats are counted once a second, in a partition this process picks: no key
  // outside the partitions is written per request, and the recorder sums every partition.
  const counts = new IngressCounts(
    redis,
    partitions.prefix(Math.floor(Math.random() * partitions.count)),
  );
  const { clocks, publishing } = senderClocks(redis, config.QUEUE_PREFIX, log);
  const app = createApp({
    intake: new BatchedIntake(intake, undefined, clocks),
    rules,
    redis,
    log,
    metrics,
    counts,
    settings: intakeSettings(config),
    clusterMetrics: cluster.isWorker ? clusterMetricsClient(metrics.registry) : undefined,
  });

  const server = createHttpServer(app);
  server.on('error', (error) => fatal('ingress cannot listen', { err: error }));
  await new Promise<void>((resolve) =>
    server.listen({ port: config.INGRESS_PORT, host: config.LISTEN_HOST }, resolve),
  );
  log.info(
    {
      port: config.INGRESS_PORT,
      redis: redisHosts(config.REDIS_URL),
      redis_cluster: config.REDIS_CLUSTER,
    },
    'ingress listening',
  );
  return {
    /** Answers the requests in flight, then closes the clients. */
    async stop(signal) {
      log.info(
        { signal, grace_ms: config.SHUTDOWN_GRACE_MS },
        'stopping: answering requests in flight',
      );
      await closeServer(server, config.SHUTDOWN_GRACE_MS, log);
      clearInterval(publishing);
      await counts.close();
      await intake.close();
      redis.disconnect();
      rulesSubscriber.disconnect();
    },
  };
}

/**
 * Each sender's clock, learnt from its events, which orders them (docs/architecture.md → Order),
 * published for operators every `SENDER_CLOCKS_PUBLISH_MS`.
 */
function senderClocks(redis: RedisClient, sharedPrefix: string, log: Logger) {
  const clocks = new SenderClocks();
  readSenderClocks(redis, sharedPrefix).then(
    (published) => clocks.seed(published),
    (error: unknown) => log.debug({ err: error }, 'no sender clocks read at start'),
  );
  const publishing = setInterval(() => {
    publishSenderClocks(redis, sharedPrefix, clocks).catch((error: unknown) =>
      log.debug({ err: error }, 'sender clocks not published'),
    );
  }, SENDER_CLOCKS_PUBLISH_MS).unref();
  return { clocks, publishing };
}

/** What the ingress's app is told of the configuration. */
const intakeSettings = (config: IngressConfig) => ({
  webhookSecrets: config.webhookSecrets,
  signatureMode: config.signatureMode,
  maxBodyBytes: config.MAX_BODY_BYTES,
  rateLimitPerSecond: config.INGRESS_RATE_LIMIT,
  maxClockSkewSeconds: config.MAX_CLOCK_SKEW_SECONDS,
  dedupWindowSeconds: config.DEDUP_WINDOW_SECONDS,
  invalidEvents: config.INVALID_EVENTS,
});

/** The queues (one per partition) the intake adds each webhook's action jobs to. */
function partitionedIntake(
  config: IngressConfig,
  redis: RedisClient,
  partitions: Partitions,
  guard: PartitionCountGuard,
  log: Logger,
): PartitionedIntake {
  const intake = new PartitionedIntake(
    redis,
    partitions,
    {
      dedupWindowSeconds: config.DEDUP_WINDOW_SECONDS,
      maxClockSkewSeconds: config.MAX_CLOCK_SKEW_SECONDS,
      recordTtlSeconds: config.RECORD_TTL_SECONDS,
      actionsConfig: config.actions,
      retry: retryPolicy(config),
    },
    guard,
    { count: config.REDIS_WAIT_REPLICAS, timeoutMs: config.REDIS_WAIT_TIMEOUT_MS },
  );
  for (const queue of intake.queues) {
    queue.on('error', (error) => log.warn({ err: error }, 'queue error'));
  }

  return intake;
}
