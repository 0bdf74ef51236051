import type { Queue } from 'bullmq';
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import { expect, vi } from 'vitest';
import { RejectedChanges } from '@pw/records';
import type { ActionName } from '@pw/shared/actions';
import { CircuitBoard } from '@pw/shared/circuits';
import { EVENT_REGISTRY, sampleEvent } from '@pw/shared/events';
import type { EventType } from '@pw/shared/events';
import { OutcomeStore } from '@pw/shared/outcomes';
import { actionJobId, ActionQueues, Partitions, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData, AcceptedWebhook } from '@pw/shared/queue';
import { AuditLog } from '@pw/shared/records';
import { DEFAULT_RULES, RulesStore } from '@pw/shared/rules';
import {
  capturedLog,
  deleteKeys,
  RedisMonitor,
  startIntake,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';
import type { TestIntake } from '@pw/test-utils';
import { createDashboard } from '../src/app.js';
import type { RecordReader } from '../src/records-api.js';
import { LoginLimit } from '../src/login-limit.js';
import type { LoginLimitOptions } from '../src/login-limit.js';
import { createDashboardMetrics } from '../src/metrics.js';
import { Operator } from '../src/operator.js';
import { Quarantine } from '../src/quarantine.js';
import { readTrends } from '../src/trends.js';
import { readSenderClocks } from '@pw/shared/intake';

/** The basic-auth account every harness dashboard has. */
export const AUTH = { user: 'operator', password: 'correct horse' };

/** The `Host` test requests claim, so that the dashboard's own origin is known in advance. */
export const HOST = 'dashboard.test:3001';
export const OWN_ORIGIN = `http://${HOST}`;

export interface DashboardHarness {
  app: ReturnType<typeof createDashboard>;
  redis: Redis;
  prefix: string;
  /** `QUEUE_PARTITIONS` of the harness (1 unless asked). */
  partitions: Partitions;
  /** The `actions` queue of partition 0 (the only one by default). */
  actions: Queue<ActionJobData>;
  /** The `actions` queue of every partition. */
  queues: ActionQueues;
  /** The outcome records of partition 0. */
  outcomes: OutcomeStore;
  /** The outcome records of every partition, by partition. */
  outcomesByPartition: readonly OutcomeStore[];
  /** Takes webhooks in as the ingress does: each its record and its waiting action jobs. */
  intake: TestIntake;
  /** The store the dashboard reads and overrides circuits through. */
  circuits: CircuitBoard;
  /** Every line the dashboard logged, parsed. */
  logs: Record<string, unknown>[];
  /** A request as the dashboard's own page sends it: credentials, own `Host` and `Origin`. */
  as(method: 'get' | 'post' | 'put' | 'patch', path: string): request.Test;
  close(): Promise<void>;
}

/** The retry policy a deployment gives each action job by default (`ACTION_ATTEMPTS`, ...). */
const DEPLOYMENT_RETRY = { attempts: 8, backoff: { type: 'exponential', delay_ms: 1000 } } as const;

/**
 * A webhook as the ingress makes it of a request: a sample event of `eventType` (its ids ending
 * in `id`, random by default, so that each is an event of its own), and the `actions` chosen.
 */
export function webhookOf(
  webhookId: string,
  eventType: EventType,
  actions: ActionName[],
  id?: string,
): AcceptedWebhook {
  const definition = EVENT_REGISTRY[eventType];
  const event = sampleEvent(definition.kind, { id });
  return {
    webhook_id: webhookId,
    event_type: eventType,
    entity_id: String(event[definition.entityIdField]),
    received_at: new Date().toISOString(),
    actions,
    event,
  };
}

const withOwnOrigin = (test: request.Test) => test.set('Host', HOST).set('Origin', OWN_ORIGIN);

export interface DashboardOptions {
  publicUrl?: string;
  records?: RecordReader;
  consoleDir?: string;
  /** Another dashboard process's queue prefix, to share its Redis keys. */
  prefix?: string;
  loginLimit?: LoginLimitOptions;
  trustProxyHops?: number;
  /** `QUEUE_PARTITIONS`. @defaultValue 1 */
  partitions?: number;
  /** How often `/metrics` reads its figures. @defaultValue METRICS_REFRESH_MS */
  metricsRefreshMs?: number;
}

/** The real dashboard on a queue prefix of its own, backed by a real Redis. */
export function startDashboard(options: DashboardOptions = {}): DashboardHarness {
  const prefix = options.prefix ?? uniquePrefix();
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const partitions = new Partitions(prefix, options.partitions ?? 1);
  const queues = new ActionQueues(redis, partitions);
  const metrics = createDashboardMetrics(queues.all, { refreshMs: options.metricsRefreshMs });
  const actions = queues.partition(0);
  const outcomesByPartition = partitions.prefixes.map(
    (queuePrefix) => new OutcomeStore(redis, { queuePrefix, recordTtlSeconds: 600 }),
  );
  // Each webhook to the partition its id names (`partitions.newWebhookId`), as the ingress does.
  const intake = startIntake(redis, prefix, {
    retry: DEPLOYMENT_RETRY,
    recordTtlSeconds: 600,
    partitions: partitions.count,
  });
  const outcomes = outcomesByPartition[0]!;
  const circuits = new CircuitBoard(redis, { queuePrefix: prefix });
  const { log, logs } = capturedLog('dashboard-test');
  const rules = new RulesStore(redis, { queuePrefix: prefix, seed: DEFAULT_RULES });
  const app = createDashboard({
    queues: queues.all,
    operator: new Operator({
      actions: queues,
      outcomes: outcomesByPartition,
      redis,
      records: options.records,
    }),
    ...(options.records
      ? {
          records: options.records,
          quarantine: new Quarantine({ intake, records: options.records, rules }),
        }
      : {}),
    circuits,
    actions: queues,
    rules,
    metrics: metrics.registry,
    trends: () => readTrends(redis, partitions, queues.all),
    senderClocks: () => readSenderClocks(redis, prefix),
    log,
    audit: new AuditLog(redis, partitions, log),
    rejected: new RejectedChanges(redis, partitions),
    credentials: AUTH,
    logins: new LoginLimit(redis, prefix, options.loginLimit),
    ...(options.trustProxyHops === undefined ? {} : { trustProxyHops: options.trustProxyHops }),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    ...(options.consoleDir === undefined ? {} : { consoleDir: options.consoleDir }),
  });
  return {
    app,
    redis,
    prefix,
    partitions,
    actions,
    queues,
    outcomes,
    outcomesByPartition,
    intake,
    circuits,
    logs,
    as: (method, path) => withOwnOrigin(request(app)[method](path).auth(AUTH.user, AUTH.password)),
    async close() {
      metrics.close();
      await Promise.all([queues.close(), intake.close()]);
      await deleteKeys(redis, prefix);
      redis.disconnect();
    },
  };
}

/**
 * A stand-in worker on the harness's `actions` queue: it completes the jobs whose ids are in
 * `passing` and fails every other one for good.
 */
export function standInWorker(h: DashboardHarness, passing: ReadonlySet<string>, concurrency = 1) {
  return new Worker<ActionJobData>(
    QUEUE_NAMES.actions,
    (job) => {
      if (!passing.has(job.id ?? '')) throw new UnrecoverableError('POST /x answered 400');
      return Promise.resolve();
    },
    { connection: h.redis, prefix: h.prefix, concurrency },
  );
}

/** The data of a `notify_customer` job of `webhookId`. */
export const notifyCustomer = (webhookId: string): ActionJobData => ({
  webhook_id: webhookId,
  action: 'notify_customer',
  event_type: 'quote.status_changed',
  event: {},
  backoff: { type: 'fixed', delay_ms: 1 },
});

/** Adds a `notify_customer` job for `webhookId` and waits until the stand-in worker failed it. */
export async function failedAction(h: DashboardHarness, webhookId: string): Promise<string> {
  const id = actionJobId(webhookId, 'notify_customer');
  await h.actions.add('notify_customer', notifyCustomer(webhookId), { jobId: id, attempts: 1 });
  await vi.waitFor(async () => expect(await h.actions.getJobState(id)).toBe('failed'), {
    timeout: 5000,
  });
  return id;
}

/** One action of one webhook, to be failed for good (`failedActions`). */
export interface DeadLetterSpec {
  webhook_id: string;
  action: ActionName;
  event_type: EventType;
}

/** Adds a job for each of `letters` and waits until a stand-in worker failed them all. */
export async function failedActions(
  h: DashboardHarness,
  letters: readonly DeadLetterSpec[],
): Promise<void> {
  const before = await h.actions.getFailedCount();
  await h.actions.addBulk(
    letters.map((letter) => ({
      name: letter.action,
      data: { ...letter, event: {}, backoff: { type: 'fixed' as const, delay_ms: 1 } },
      opts: { jobId: actionJobId(letter.webhook_id, letter.action), attempts: 1 },
    })),
  );
  await vi.waitFor(
    async () => expect(await h.actions.getFailedCount()).toBe(before + letters.length),
    { timeout: 20_000, interval: 50 },
  );
}

/** The commands on the test's own keys that `during` makes Redis run (Redis MONITOR). */
export async function watchCommands(harness: DashboardHarness, during: () => Promise<void>) {
  const seen = await RedisMonitor.during(testRedisUrl(), during, ({ args }) =>
    args.some((arg) => arg.includes(harness.prefix)),
  );
  return seen.map(({ args }) => args);
}
