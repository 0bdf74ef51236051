import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { RecordStore } from '@pw/records';
import { OutcomeStore } from '@pw/shared/outcomes';
import { Partitions } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import { createLogger } from '@pw/shared/runtime';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { deleteKeys, startIntake, testRedisUrl, testSchema, uniquePrefix } from '@pw/test-utils';
import type { TestIntake, TestSchema } from '@pw/test-utils';
import type { RecordWriter } from '../src/recorder.js';
import { Recorder } from '../src/recorder.js';
import type { RecorderMetrics } from '../src/metrics.js';

export const log = createLogger({ name: 'recorder-test', level: 'silent' });

/**
 * What each test gets: a Redis, a key prefix of its own, the ingress's intake, the outcome
 * records the worker changes, its cleanups.
 */
export interface RecorderHarness {
  redis: Redis;
  prefix: string;
  /** Takes webhooks in as the ingress does: each its record, its action jobs, its stream entry. */
  intake: TestIntake;
  outcomes: OutcomeStore;
  /** Run after the test, last added first. */
  cleanups: (() => Promise<unknown>)[];
}

/** Registers the per-test setup and teardown; the object's fields are the running test's. */
export function recorderHarness(): RecorderHarness {
  const harness = { cleanups: [] } as unknown as RecorderHarness;
  beforeEach(() => {
    harness.redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    harness.prefix = uniquePrefix();
    harness.outcomes = new OutcomeStore(harness.redis, {
      queuePrefix: harness.prefix,
      recordTtlSeconds: 600,
    });
    harness.intake = startIntake(harness.redis, harness.prefix, {
      retry: { attempts: 8, backoff: { type: 'exponential', delay_ms: 1000 } },
      recordTtlSeconds: 600,
    });
  });
  afterEach(async () => {
    for (const cleanup of harness.cleanups.splice(0).reverse()) await cleanup();
    await harness.intake.close();
    await deleteKeys(harness.redis, harness.prefix);
    harness.redis.disconnect();
  });
  return harness;
}

let count = 0;
/** A webhook as the ingress takes it in, with an event and an entity id of its own. */
export const job = (
  actions = ['notify_customer'],
  fields: Partial<AcceptedWebhook> = {},
): AcceptedWebhook => {
  count += 1;
  return {
    webhook_id: `wh_test${String(count).padStart(18, '0')}`,
    event_type: 'quote.status_changed',
    entity_id: `Q-${count}`,
    received_at: new Date().toISOString(),
    actions: actions as AcceptedWebhook['actions'],
    event: { quote_id: `Q-${count}`, customer_id: `C-${count % 7}`, status: 'approved' },
    ...fields,
  };
};

/** A recorder on the harness's prefix, stopped after the test. */
export async function startRecorder(
  harness: RecorderHarness,
  store: RecordWriter,
  settings: {
    blockMs?: number;
    metrics?: RecorderMetrics;
    partitions?: Partitions;
    recordTtlSeconds?: number;
    /** Its name in the consumer group. @defaultValue 'test' */
    consumer?: string;
    claimIdleMs?: number;
    webhookWaitMs?: number;
    batchSize?: number;
  } = {},
): Promise<Recorder> {
  // The recorder's own connection (it blocks on reads), closed after it: the recorder leaves the
  // connection it is given to its owner.
  const connection = harness.redis.duplicate();
  const recorder = new Recorder(
    connection,
    store,
    {
      partitions: settings.partitions ?? new Partitions(harness.prefix),
      consumer: settings.consumer ?? 'test',
      retentionDays: 90,
      recordTtlSeconds: settings.recordTtlSeconds ?? 600,
      blockMs: settings.blockMs ?? 50,
      ...(settings.claimIdleMs === undefined ? {} : { claimIdleMs: settings.claimIdleMs }),
      ...(settings.webhookWaitMs === undefined ? {} : { webhookWaitMs: settings.webhookWaitMs }),
      ...(settings.batchSize === undefined ? {} : { batchSize: settings.batchSize }),
    },
    log,
    settings.metrics,
  );
  await recorder.start();
  harness.cleanups.push(async () => {
    await recorder.stop();
    connection.disconnect();
  });
  return recorder;
}

/** Resolves once the stream holds nothing the store lacks. */
export async function drained(harness: RecorderHarness, deadlineMs = 120_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  const key = recordStreamKey(harness.prefix);
  while ((await harness.redis.xlen(key)) > 0) {
    if (Date.now() > until) throw new Error(`stream not drained in ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A record store on a schema of its own, dropped after the test. */
export async function schemaStore(
  harness: RecorderHarness,
): Promise<{ store: RecordStore; schema: TestSchema }> {
  const schema = await testSchema();
  const store = await RecordStore.open({ databaseUrl: schema.databaseUrl, schema: schema.schema });
  harness.cleanups.push(
    () => schema.drop(),
    () => store.close(),
  );
  return { store, schema };
}

/**
 * Takes `accepted` in as the ingress does, then runs its one action to completion as a worker
 * would.
 */
export async function completeWebhook(
  harness: RecorderHarness,
  accepted: AcceptedWebhook,
): Promise<AcceptedWebhook> {
  await harness.intake.add(accepted);
  const attempts = await harness.outcomes.started(accepted.webhook_id, 'notify_customer');
  const timing = { started_at: accepted.received_at, status: 200, duration_ms: 1 };
  await harness.outcomes.completed(accepted.webhook_id, 'notify_customer', timing, attempts);
  return accepted;
}
