// The measured windows of one round, each around one part of the path on the run's private
// Redis: the intake (the ingress taking webhooks), the worker draining their actions, the
// recorder copying the record stream, and the raw BullMQ baseline's enqueue and worker on copies
// of the same action jobs. Each window starts the process it measures, so its start-up counts.
import { setTimeout as delay } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { keys, QUEUE_NAMES } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import type { BenchRun } from '../bench-run.js';
import { drive } from '../load.js';
import { RAW_QUEUE, sandboxToken } from '../phases/raw-http.js';
import type { RawJob } from '../phases/raw-http.js';
import {
  startIngress,
  startRawHttpWorker,
  startRecorder,
  startWorker,
  whileUp,
} from '../processes.js';
import type { Sandbox } from '../processes.js';
import type { RedisMeter, Window } from './meter.js';

export interface Stage {
  bench: BenchRun;
  sandbox: Sandbox;
  meter: RedisMeter;
  /** The measurer's own connection (its polls are counted and taken out). */
  redis: Redis;
  /** `RECORD_TTL_SECONDS` for the ingress and the worker. */
  recordTtlSeconds: number;
}

/** How often a window asks Redis whether its work is done. */
const POLL_MS = 200;

/**
 * `webhooks` new webhooks of the bench's mix through the ingress (one process per core), at the
 * run's `rate` if it has one.
 */
export async function intakeWindow(stage: Stage, webhooks: number): Promise<Window> {
  const { bench, meter } = stage;
  const env = { RECORD_TTL_SECONDS: String(stage.recordTtlSeconds) };
  const ingress = await startIngress(bench, bench.options.redisUrl, bench.cores, env);
  bench.pool.fill(webhooks);
  await meter.start();
  const load = await whileUp(
    drive(bench.pool, {
      url: ingress.url,
      connections: Math.min(bench.options.connections, webhooks),
      durationSeconds: bench.options.duration,
      amount: webhooks,
      rate: bench.options.rate,
    }),
    ingress.child,
  );
  const window = await meter.end(webhooks);
  await ingress.child.stop();
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`the ingress refused ${load.non2xx + load.errors} of ${webhooks} webhooks`);
  }
  return window;
}

/** The worker draining every action job queued, until none is waiting, active or delayed. */
export async function workerWindow(stage: Stage, actions: number): Promise<Window> {
  const { bench, meter, sandbox } = stage;
  await meter.start();
  const env = { RECORD_TTL_SECONDS: String(stage.recordTtlSeconds) };
  const worker = await startWorker(bench, sandbox, env);
  await whileUp(untilDrained(stage), worker, sandbox.child);
  const window = await meter.end(actions);
  await worker.stop();
  return window;
}

/** Resolves once the actions queue has no job waiting, active, delayed or prioritized. */
async function untilDrained({ bench, meter, redis }: Stage): Promise<void> {
  const queue = keys.queue(bench.prefix, QUEUE_NAMES.actions);
  for (;;) {
    const replies = await redis
      .pipeline()
      .llen(queue.wait!)
      .llen(queue.active!)
      .zcard(queue.delayed!)
      .zcard(queue.prioritized!)
      .exec();
    meter.counted('llen', 2);
    meter.counted('zcard', 2);
    const left = (replies ?? []).reduce((sum, [, n]) => sum + Number(n), 0);
    if (left === 0) return;
    await delay(POLL_MS);
  }
}

/** The recorder copying the record stream to PostgreSQL at `databaseUrl` until it is empty. */
export async function recorderWindow(
  stage: Stage,
  databaseUrl: string,
  units: number,
): Promise<Window> {
  const { bench, meter, redis } = stage;
  await meter.start();
  const recorder = await startRecorder(bench, databaseUrl, {
    RECORD_TTL_SECONDS: String(stage.recordTtlSeconds),
  });
  const emptied = async () => {
    for (;;) {
      meter.counted('xlen');
      if ((await redis.xlen(recordStreamKey(bench.prefix))) === 0) return;
      await delay(POLL_MS);
    }
  };
  await whileUp(emptied(), recorder);
  const window = await meter.end(units);
  await recorder.stop();
  return window;
}

/**
 * The baseline's enqueue: `Queue.add` of each job, as many in flight as the load's connections;
 * at `perSecond` jobs a second when given (the intake's rate in actions), else as fast as it goes.
 */
export async function rawEnqueueWindow(
  stage: Stage,
  jobs: readonly RawJob[],
  perSecond?: number,
): Promise<Window> {
  const { bench, meter } = stage;
  const connection = { url: bench.options.redisUrl };
  const raw = new Queue(RAW_QUEUE, { connection, prefix: bench.prefix });
  try {
    await meter.start();
    const startedAt = performance.now();
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        const due = perSecond ? startedAt + (i * 1000) / perSecond - performance.now() : 0;
        if (due > 0) await delay(due);
        const job = jobs[i]!;
        await raw.add(job.name, job.data, job.opts);
      }
    };
    await Promise.all(Array.from({ length: bench.options.connections }, lane));
    return await meter.end(jobs.length);
  } finally {
    await raw.close();
  }
}

/** The baseline's worker (raw-http-worker.mjs) draining the `jobs` jobs enqueued. */
export async function rawWorkerWindow(stage: Stage, jobs: number): Promise<Window> {
  const { bench, meter, sandbox } = stage;
  const token = await sandboxToken(sandbox.env);
  await meter.start();
  const child = await startRawHttpWorker(bench, sandbox, token, jobs);
  await whileUp(child.printed('jobs_per_s'), child, sandbox.child);
  const window = await meter.end(jobs);
  await child.stop();
  return window;
}
