import type { Redis } from 'ioredis';
import { DEFAULT_ACTIONS_CONFIG } from '@pw/shared/actions';
import { TokenManager } from '@pw/shared/auth';
import { OutcomeStore } from '@pw/shared/outcomes';
import { claimPartitionCount, Partitions } from '@pw/shared/queue';
import { createLogger, createRedis, duplicateRedis } from '@pw/shared/runtime';
import type { ActionsConfig } from '@pw/shared/actions';
import type { IntakeResult } from '@pw/shared/intake';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import type { Logger, RedisClient } from '@pw/shared/runtime';
import type { BackoffPolicy, AcceptedWebhook } from '@pw/shared/queue';
import { startSandbox } from '@pw/sandbox';
import { deleteKeys, startIntake, testRedisUrl, uniquePrefix } from '@pw/test-utils';
import type { PartnerTarget } from '../src/config.js';
import { marketTable } from '../src/market-table.js';
import { WORKER_REDIS_OPTIONS, createWorker } from '../src/create-worker.js';
import type { RunningWorker } from '../src/create-worker.js';
import { WorkerMetrics } from '../src/metrics.js';
import { PartnerApi } from '../src/partner-api.js';

export type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

export interface WorkerHarness {
  sandbox: Sandbox;
  worker: RunningWorker;
  partitions: Partitions;
  /** The outcome records of each partition, by index. */
  outcomes: OutcomeStore[];
  tokens: TokenManager;
  metrics: WorkerMetrics;
  prefix: string;
  /** The default partner target (the sandbox's). */
  target: PartnerTarget;
  /**
   * Takes a webhook in as the ingress does (the shared intake: its record and its action jobs in
   * one transaction); throws for a repeat of an event already taken in. With partitions, in its
   * entity's partition, under an id made anew for it (set on `data`), as the ingress makes it.
   */
  enqueue(data: AcceptedWebhook): Promise<IntakeResult>;
  /** The outcome once every action has finished. */
  finished(webhookId: string, timeoutMs?: number): Promise<WebhookOutcome>;
  /** The outcome as soon as `condition` holds. */
  until(
    webhookId: string,
    condition: (outcome: WebhookOutcome) => boolean,
  ): Promise<WebhookOutcome>;
  close(): Promise<void>;
}

export interface WorkerHarnessOptions {
  /** `ACTIONS_CONFIG`, of the worker and of the intake alike. */
  actionsConfig?: ActionsConfig;
  /** `ACTION_ATTEMPTS`, which the intake stamps on each action job. @defaultValue 4 */
  attempts?: number;
  /** The intake's default backoff. @defaultValue fixed 20 ms, so retries in tests are quick */
  backoff?: BackoffPolicy;
  tokenTtlSeconds?: number;
  sandbox?: Sandbox;
  /** A target per `metadata.market`, as `ACTIONS_CONFIG` markets would give. */
  byMarket?: Record<string, PartnerTarget>;
  /** `CIRCUIT_FAILURE_THRESHOLD` and `CIRCUIT_PROBE_INTERVAL_MS`. @defaultValue 10 and 5000 */
  circuit?: { failureThreshold: number; probeIntervalMs: number };
  /** The jobs' lock (and stalled check interval), and how often a job may stall. */
  lockMs?: number;
  maxStalledCount?: number;
  /** `QUEUE_PARTITIONS`, and the `WORKER_PARTITIONS` taken. @defaultValue 1, and all */
  partitions?: number;
  workerPartitions?: number[];
  /** `WORKER_CONCURRENCY`. @defaultValue 10 */
  concurrency?: number;
  /** The Redis to run on. @defaultValue the tests' shared one */
  redisUrl?: string;
  /**
   * The worker's connection's way to that Redis (a slow proxy, say), when not `redisUrl`; the
   * test's own reads and the intake go straight to `redisUrl`.
   */
  queueRedisUrl?: string;
  /** `redisUrl` names a Redis Cluster (`REDIS_CLUSTER`): the queue prefix is then a hash tag. */
  cluster?: boolean;
  /** The worker's logger. @defaultValue a silent one */
  log?: Logger;
  /** The partner-API client, made with the harness's tokens. @defaultValue a `PartnerApi` */
  api?: (tokens: TokenManager) => PartnerApi;
}

/**
 * Takes in one webhook of `make()` every `intervalMs` until `stop()`, which returns them: traffic
 * the partner serves meanwhile (a poison input is told from an outage only while the partner
 * serves other inputs).
 */
export function trickle(harness: WorkerHarness, make: () => AcceptedWebhook, intervalMs: number) {
  const sent: AcceptedWebhook[] = [];
  let sending = Promise.resolve();
  const timer = setInterval(() => {
    const job = make();
    sent.push(job);
    sending = sending.then(() => harness.enqueue(job)).then(() => undefined);
  }, intervalMs);
  return {
    async stop(): Promise<AcceptedWebhook[]> {
      clearInterval(timer);
      await sending;
      return sent;
    },
  };
}

/** The sandbox's partner API with its identity provider's client; `baseUrl`: another API's. */
export function sandboxTarget(sandbox: Sandbox, baseUrl = sandbox.env.API_BASE_URL): PartnerTarget {
  return {
    baseUrl,
    credentials: {
      authUrl: sandbox.env.AUTH_URL,
      realm: sandbox.env.AUTH_REALM,
      clientId: sandbox.env.AUTH_CLIENT_ID,
      clientSecret: sandbox.env.AUTH_CLIENT_SECRET,
      scope: 'openid',
    },
  };
}

/** The real worker on its own queue prefix, against the real sandbox IdP and partner API. */
/** The sandbox given, or one of the harness's own. */
const sandboxOf = async (options: WorkerHarnessOptions): Promise<Sandbox> =>
  options.sandbox ??
  (await startSandbox({ idpPort: 0, apiPort: 0, accessTokenTtlSeconds: options.tokenTtlSeconds }));

/** As a deployment's first process does: the count stored, the entity map keyed (`enqueue`). */
async function claimedPartitions(client: RedisClient, prefix: string, count: number) {
  const partitions = new Partitions(prefix, count);
  await claimPartitionCount(client, partitions);
  return partitions;
}

export async function startWorkerHarness(
  options: WorkerHarnessOptions = {},
): Promise<WorkerHarness> {
  const sandbox = await sandboxOf(options);
  const cluster = options.cluster ?? false;
  const prefix = cluster ? `{${uniquePrefix()}}` : uniquePrefix();
  const redisUrl = options.redisUrl ?? testRedisUrl();
  const connection = createRedis(options.queueRedisUrl ?? redisUrl, cluster, WORKER_REDIS_OPTIONS);
  const client = createRedis(redisUrl, cluster, { maxRetriesPerRequest: 1 });
  const subscriber = duplicateRedis(client);
  const metrics = new WorkerMetrics();
  const tokens = new TokenManager({
    retryDelayMs: 50,
    onRequest: (outcome) => metrics.tokenRequests.inc({ outcome }),
  });
  const partitions = await claimedPartitions(client, prefix, options.partitions ?? 1);
  const outcomes = partitions.prefixes.map(
    (queuePrefix) => new OutcomeStore(client, { queuePrefix, recordTtlSeconds: 3600 }),
  );
  const outcomesOf = (webhookId: string) => outcomes[partitions.ofWebhookId(webhookId)]!;
  const fallback = sandboxTarget(sandbox);
  const api = options.api?.(tokens) ?? new PartnerApi({ tokens, timeoutMs: 5000 });
  const actionsConfig = options.actionsConfig ?? DEFAULT_ACTIONS_CONFIG;
  const retry = {
    attempts: options.attempts ?? 4,
    backoff: options.backoff ?? { type: 'fixed' as const, delay_ms: 20 },
  };
  const worker = createWorker({
    connection,
    partitions,
    workerPartitions: options.workerPartitions,
    outcomes,
    api,
    targets: { fallback, byMarket: marketTable(options.byMarket ?? {}) },
    actionsConfig,
    log: options.log ?? createLogger({ name: 'worker-test', level: 'silent' }),
    metrics,
    concurrency: options.concurrency ?? 10,
    circuit: options.circuit,
    lockMs: options.lockMs,
    maxStalledCount: options.maxStalledCount,
  });
  // The ingress's ACTIONS_CONFIG is the worker's, as in a deployment sharing one configuration.
  const intakes = partitions.prefixes.map((queuePrefix) =>
    // A cluster client serves the intake as well: it only hands it to BullMQ and the stores.
    startIntake(client as Redis, queuePrefix, { actionsConfig, retry, recordTtlSeconds: 3600 }),
  );
  return {
    sandbox,
    worker,
    partitions,
    outcomes,
    tokens,
    metrics,
    prefix,
    target: fallback,
    enqueue(data) {
      const partition = partitions.ofEntity(data.entity_id);
      if (partitions.count > 1) data.webhook_id = partitions.newWebhookId(partition);
      return intakes[partition]!.add(data);
    },
    until: (webhookId, condition) =>
      outcomesOf(webhookId).waitUntil(webhookId, subscriber, condition, { timeoutMs: 15_000 }),
    finished: (webhookId, timeoutMs = 15_000) =>
      outcomesOf(webhookId).waitUntilFinished(webhookId, subscriber, { timeoutMs }),
    async close() {
      await worker.close(true);
      await api.close();
      await Promise.all(intakes.map((intake) => intake.close()));
      // A cluster is the test's own, gone with it.
      if (!cluster) await deleteKeys(client as Redis, prefix);
      subscriber.disconnect();
      client.disconnect();
      connection.disconnect();
      if (!options.sandbox) await sandbox.stop();
    },
  };
}
