// One round on the run's private Redis, emptied first: the intake, the baseline's enqueue and
// worker on copies of the same action jobs, the worker, the recorder; then, once the keys due
// within RECORD_TTL_SECONDS have expired, what is left of the finished webhooks, by kind.
import { Queue } from 'bullmq';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import type { ActionJobData } from '@pw/shared/queue';
import { RAW_QUEUE, rawJobsFromBacklog } from '../phases/raw-http.js';
import type { KindFigure } from '@pw/test-utils';
import { memoryByKind } from '@pw/test-utils';
import { keysExpiringWithin, untilGone } from './memory.js';
import type { Window } from './meter.js';
import {
  intakeWindow,
  rawEnqueueWindow,
  rawWorkerWindow,
  recorderWindow,
  workerWindow,
} from './windows.js';
import type { Stage } from './windows.js';
import type { Part, RoundCost } from './figures.js';

export interface RoundMemory {
  /** What the finished webhooks left, keys and bytes by kind. */
  kinds: Map<string, KindFigure>;
  /** The same before the sweep: completed jobs stay until later jobs complete. */
  kindsBeforeSweep: Map<string, KindFigure>;
  /** The webhooks they came from: the round's and the sweep's. */
  webhooks: number;
  /** The record stream's bytes once the worker was done, and once the recorder had copied it. */
  streamBytes: { drained: number; recorded: number };
  /** What the baseline's finished jobs left (kept an hour, as its `removeOnComplete` says). */
  rawKinds: Map<string, KindFigure>;
}

/**
 * Webhooks sent after the round's have expired, so that BullMQ's clean-up of completed jobs
 * older than RECORD_TTL_SECONDS, which runs as later jobs complete, has run as it does under
 * steady traffic.
 */
export const SWEEP_WEBHOOKS = 10;

/** Measures one round; `afterWindow` runs after each window (the naming pass reads the slowlog). */
export async function measureRound(
  stage: Stage,
  webhooks: number,
  databaseUrl: string,
  afterWindow: (part: Part) => Promise<void> = () => Promise.resolve(),
): Promise<{ cost: RoundCost; memory: RoundMemory }> {
  const { bench, redis } = stage;
  await redis.flushall();
  const windows: Partial<Record<Part, Window>> = {};
  const measured = async (part: Part, window: Promise<Window>) => {
    windows[part] = await window;
    await afterWindow(part);
  };
  bench.log(`intake: ${webhooks} webhooks`);
  await measured('intake', intakeWindow(stage, webhooks));
  const connection = { url: bench.options.redisUrl };
  const actionsQueue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection,
    prefix: bench.prefix,
    streams: QUEUE_STREAMS,
  });
  const { jobs } = await rawJobsFromBacklog(actionsQueue, Infinity).finally(() =>
    actionsQueue.close(),
  );
  bench.log(`baseline: raw BullMQ add and worker, ${jobs.length} jobs`);
  const rate = bench.options.rate && (bench.options.rate * jobs.length) / webhooks;
  await measured('raw_enqueue', rawEnqueueWindow(stage, jobs, rate));
  await measured('raw_worker', rawWorkerWindow(stage, jobs.length));
  const rawKinds = await memoryByKind(redis, bench.prefix, [RAW_QUEUE], {
    pattern: `${bench.prefix}:${RAW_QUEUE}:*`,
  });
  await obliterate(stage, RAW_QUEUE);
  bench.log(`worker: ${jobs.length} actions`);
  await measured('worker', workerWindow(stage, jobs.length));
  const drained = await streamBytes(stage);
  bench.log('recorder: the record stream to PostgreSQL');
  await measured('recorder', recorderWindow(stage, databaseUrl, jobs.length));
  const recorded = await streamBytes(stage);
  const { before: kindsBeforeSweep, after: kinds } = await whatIsLeft(stage, databaseUrl);
  const cost = { webhooks, actions: jobs.length, windows: windows as Record<Part, Window> };
  const memory = {
    kinds,
    kindsBeforeSweep,
    webhooks: webhooks + SWEEP_WEBHOOKS,
    streamBytes: { drained, recorded },
    rawKinds,
  };
  return { cost, memory };
}

/**
 * The keys left once those due within RECORD_TTL_SECONDS are gone, a sweep run through the whole
 * path (the recorder too), and those due gone again.
 */
async function whatIsLeft(stage: Stage, databaseUrl: string) {
  const { bench, redis, recordTtlSeconds } = stage;
  const expire = async () => {
    const due = await keysExpiringWithin(redis, bench.prefix, (recordTtlSeconds + 1) * 1000);
    bench.log(`waiting for ${due.length} keys to expire`);
    await untilGone(redis, due, (recordTtlSeconds + 60) * 1000);
  };
  await expire();
  const before = await memoryByKind(redis, bench.prefix, [QUEUE_NAMES.actions]);
  bench.log(`sweep: ${SWEEP_WEBHOOKS} webhooks, BullMQ's clean-up of aged completed jobs`);
  await intakeWindow(stage, SWEEP_WEBHOOKS);
  await workerWindow(stage, SWEEP_WEBHOOKS);
  await recorderWindow(stage, databaseUrl, SWEEP_WEBHOOKS);
  await expire();
  return { before, after: await memoryByKind(redis, bench.prefix, [QUEUE_NAMES.actions]) };
}

async function streamBytes({ bench, redis }: Stage): Promise<number> {
  const bytes = await redis.call('MEMORY', 'USAGE', recordStreamKey(bench.prefix), 'SAMPLES', '0');
  return typeof bytes === 'number' ? bytes : 0;
}

async function obliterate({ bench }: Stage, name: string): Promise<void> {
  const queue = new Queue(name, {
    connection: { url: bench.options.redisUrl },
    prefix: bench.prefix,
  });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
  }
}
