import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import { DEFAULT_ACTIONS_CONFIG } from '@pw/shared/actions';
import { PartitionedIntake } from '@pw/shared/intake';
import { actionJobId, claimPartitionCount, Partitions } from '@pw/shared/queue';
import { DEFAULT_RULES } from '@pw/shared/rules';
import { createLogger } from '@pw/shared/runtime';
import type { Acknowledgement } from '@pw/shared/events';
import type { ReplicaWait } from '@pw/shared/intake';
import type { ActionJobData } from '@pw/shared/queue';
import type { RoutingRule } from '@pw/shared/rules';
import {
  deleteKeys,
  ROTATED_SECRET,
  TEST_SECRET,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';
import { createApp } from '../src/app.js';
import { IngressMetrics } from '../src/metrics.js';
import { BatchedIntake } from '../src/batched-intake.js';
import type { RulesSource, WebhookRouteSettings } from '../src/webhook-routes.js';

export interface Harness {
  app: ReturnType<typeof createApp>;
  /** The `actions` queue the ingress adds each webhook's action jobs to (partition 0's). */
  queue: Queue<ActionJobData>;
  /** Every partition's `actions` queue. */
  queues: readonly Queue<ActionJobData>[];
  partitions: Partitions;
  /** The ingress's own Redis client. */
  redis: Redis;
  /** A separate client for assertions. */
  inspect: Redis;
  prefix: string;
  metrics: IngressMetrics;
  close(): Promise<void>;
}

export interface HarnessOptions {
  redisUrl?: string;
  settings?: Partial<WebhookRouteSettings>;
  rules?: readonly RoutingRule[];
  /** Where the app reads its rules, made on the ingress's Redis and prefix; else `rules`. */
  rulesSource?: (redis: Redis, prefix: string) => RulesSource;
  /** The ingress's clock. @defaultValue Date.now */
  now?: () => number;
  /** `QUEUE_PARTITIONS`. @defaultValue 1 */
  partitions?: number;
  /** `REDIS_WAIT_REPLICAS` and `REDIS_WAIT_TIMEOUT_MS`. @defaultValue none */
  replicaWait?: ReplicaWait;
}

/** The real ingress app on a queue prefix of its own, backed by a real Redis. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const url = options.redisUrl ?? testRedisUrl();
  const prefix = uniquePrefix();
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', () => undefined);
  const inspect = new Redis(url, { maxRetriesPerRequest: 1 });
  inspect.on('error', () => undefined);
  const metrics = new IngressMetrics();
  const settings: WebhookRouteSettings = {
    webhookSecrets: [TEST_SECRET, ROTATED_SECRET],
    signatureMode: 'required',
    maxBodyBytes: 262_144,
    rateLimitPerSecond: 0,
    maxClockSkewSeconds: 300,
    dedupWindowSeconds: 604_800,
    // The suites that check each schema refusal run in reject mode; quarantine.test.ts the other.
    invalidEvents: 'reject',
    ...options.settings,
  };
  const partitions = new Partitions(prefix, options.partitions ?? 1);
  // As the ingress's guard does before it takes anything in: the count stored, the map keyed.
  await claimPartitionCount(inspect, partitions);
  const intake = new PartitionedIntake(
    redis,
    partitions,
    {
      dedupWindowSeconds: settings.dedupWindowSeconds,
      maxClockSkewSeconds: settings.maxClockSkewSeconds,
      recordTtlSeconds: 604_800,
      actionsConfig: DEFAULT_ACTIONS_CONFIG,
      retry: { attempts: 8, backoff: { type: 'exponential', delay_ms: 1000 } },
    },
    undefined,
    options.replicaWait,
  );
  const [queue] = intake.queues as [Queue<ActionJobData>];
  for (const partitionQueue of intake.queues) partitionQueue.on('error', () => undefined);
  await queue.waitUntilReady();
  const app = createApp({
    intake: new BatchedIntake(intake),
    now: options.now,
    rules: options.rulesSource?.(redis, prefix) ?? {
      current: () => options.rules ?? DEFAULT_RULES,
    },
    redis,
    log: createLogger({ name: 'ingress-test', level: 'silent' }),
    metrics,
    settings,
  });
  return {
    app,
    queue,
    queues: intake.queues,
    partitions,
    redis,
    inspect,
    prefix,
    metrics,
    async close() {
      await deleteKeys(inspect, prefix).catch(() => undefined);
      await intake.close();
      redis.disconnect();
      inspect.disconnect();
    },
  };
}

/** The webhooks that have action jobs in the queue, whatever their state. */
export async function jobCount(harness: Harness): Promise<number> {
  const jobs = await harness.queue.getJobs();
  return new Set(jobs.map((job) => job.data.webhook_id)).size;
}

/** The action jobs of an acknowledged webhook, one per action of its ack (undefined: missing). */
export const actionJobsOf = (harness: Pick<Harness, 'queue'>, ack: Acknowledgement) =>
  Promise.all(
    ack.actions_triggered.map((action) =>
      harness.queue.getJob(actionJobId(ack.webhook_id, action)),
    ),
  );

/** POSTs `body` to the app as JSON, as a sender does. */
export const postJson = (app: Harness['app'], path: string, body: unknown) =>
  request(app).post(path).set('content-type', 'application/json').send(JSON.stringify(body));
