// Our worker draining a backlog of webhooks queued through the ingress while it was stopped:
// actions per second from its first completion until the backlog is gone, to compare with the raw
// baselines. Each drain gets a fresh backlog of its own (the action jobs the ingress's intake
// added) and runs it to the end.
import { setTimeout as delay } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import type { ChildRun } from '@pw/test-utils';
import type { BenchRun } from '../bench-run.js';
import { RssSampler, treeCpuMs } from '../process-usage.js';
import { drive } from '../load.js';
import { jobsLeft, until } from '../poll.js';
import { startIngress, startRecorder, startWorker, whileUp } from '../processes.js';
import { benchDatabase } from '../record-store.js';
import { redisCpuMs } from '../redis-info.js';
import { rawHttpJobs } from './raw-http.js';
import type { Sandbox } from '../processes.js';
import type { Figures } from '../results.js';

export interface DrainFigures {
  worker: Figures['worker'];
  /** The sandbox's peak RSS while the worker called it. */
  sandboxRssMb: number;
}

export async function workerDrainPhase(bench: BenchRun, sandbox: Sandbox): Promise<DrainFigures> {
  const backlog = backlogSize(bench);
  const sampler = new RssSampler({ sandbox: sandbox.child.pid });
  await freshBacklog(bench, backlog);
  bench.log(`worker draining ${backlog} webhooks`);
  // With the sandbox's CPU per action: what one action's work costs the machine in all.
  const drained = await whileUp(
    drainRate(
      bench,
      async () => {
        const worker = await startWorker(bench, sandbox);
        sampler.add('worker', worker.pid);
        return [worker];
      },
      sandbox.child.pid,
    ),
    sandbox.child,
  );
  await stopAll(drained.workers);
  // Scale-out: two worker processes on the same queues.
  await freshBacklog(bench, backlog);
  bench.log(`two worker processes draining ${backlog} webhooks`);
  const two = await whileUp(
    drainRate(bench, () => Promise.all([startWorker(bench, sandbox), startWorker(bench, sandbox)])),
    sandbox.child,
  );
  await stopAll(two.workers);
  await freshBacklog(bench, backlog);
  // The same again with the recorder writing every change to PostgreSQL as it does in a
  // deployment: the cost of recording. The recorder first writes what the stream already holds
  // (the accepted webhooks), so that the window measures it keeping up with the worker, not
  // catching up on what came before.
  bench.log('recorder writing the changes made so far');
  const database = await benchDatabase(bench);
  const recorder = await startRecorder(bench, database.url);
  sampler.add('recorder', recorder.pid);
  await whileUp(streamEmptied(bench), recorder);
  bench.log(`worker draining ${backlog} webhooks, the recorder writing to PostgreSQL`);
  const recording = await whileUp(
    drainRate(bench, async () => [await startWorker(bench, sandbox)], recorder.pid),
    sandbox.child,
    recorder,
  );
  await stopAll(recording.workers);
  const recordedChanges = await database.recordedChanges();
  const rss = sampler.stop();
  await recorder.stop();
  await database.close();
  await bench.clearKeys();
  return {
    worker: {
      actions_per_s: drained.perSecond,
      actions_per_s_two_processes: two.perSecond,
      actions_per_s_recording: recording.perSecond,
      recorded_changes: recordedChanges,
      worker_cpu_ms_per_action: drained.workerCpuMsPerAction,
      worker_cpu_ms_per_action_recording: recording.workerCpuMsPerAction,
      recorder_cpu_ms_per_action: recording.alsoCpuMsPerAction,
      redis_cpu_ms_per_action: drained.redisCpuMsPerAction,
      sandbox_cpu_ms_per_action: drained.alsoCpuMsPerAction,
      actions_counted: drained.completed,
      window_s: drained.seconds,
      backlog_webhooks: backlog,
      concurrency: bench.options.concurrency,
      rss_mb: rss.worker ?? 0,
    },
    sandboxRssMb: rss.sandbox ?? 0,
  };
}

const stopAll = (workers: ChildRun[]) => Promise.all(workers.map((worker) => worker.stop()));

/**
 * Webhooks per drain: about as many actions as the raw HTTP worker gets jobs
 * (`rawHttpJobs`), so that both workers are measured over the same amount of work, their
 * start-up (the JIT compiling their code) weighing as much in each; the bench's events carry
 * 1.33 actions each.
 */
export const backlogSize = (bench: BenchRun) =>
  bench.options.quick ? 500 : Math.round(rawHttpJobs(bench) / 1.33);

/** Deletes the run's keys, then queues `webhooks` new webhooks through the ingress (all cores). */
export async function freshBacklog(bench: BenchRun, webhooks: number): Promise<void> {
  await bench.clearKeys();
  const { redisUrl, connections, duration } = bench.options;
  const ingress = await startIngress(bench, redisUrl, bench.cores);
  bench.pool.fill(webhooks);
  const load = await whileUp(
    drive(bench.pool, {
      url: ingress.url,
      connections,
      durationSeconds: duration,
      amount: webhooks,
    }),
    ingress.child,
  );
  await ingress.child.stop();
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`the ingress refused ${load.non2xx + load.errors} webhooks of the backlog`);
  }
}

/**
 * A window ends no sooner than this many completions (unless the backlog is gone first): a short
 * window (--quick's 1 s) on a busy machine could otherwise end before a new worker, slowed by
 * its start, completes anything, and report 0 actions/s.
 */
const MIN_COMPLETIONS = 50;

/**
 * Completed actions per second of the workers `start` starts, from the first completion until
 * the backlog is gone (or, with `windowSeconds`, for that long at most, and at least
 * `MIN_COMPLETIONS` completions); with the CPU time the workers, and the process `alsoPid` if
 * given (the recorder), used per action in that window. Progress is read from the queue's counts
 * (`until`), not from its events stream, whose reader would load the cores our worker shares and
 * not the raw baseline's, which counts in its own process.
 */
export async function drainRate(
  bench: BenchRun,
  start: () => Promise<ChildRun[]>,
  alsoPid?: number,
  windowSeconds = Math.max(60, bench.options.duration * 10),
) {
  const connection = { url: bench.options.redisUrl };
  const { prefix } = bench;
  const actions = new Queue(QUEUE_NAMES.actions, { connection, prefix, streams: QUEUE_STREAMS });
  const redis = new Redis(bench.options.redisUrl);
  try {
    const completed = async () => (await actions.getJobCounts('completed')).completed ?? 0;
    const initially = await completed();
    if ((await jobsLeft([actions])) === 0) throw new Error('drainRate: no backlog to drain');
    const workers = await start();
    // The first completion; a backlog gone before it was seen would otherwise be waited on for
    // ever (the window would measure nothing).
    await whileUp(
      until(async () => {
        if ((await completed()) > initially) return true;
        if ((await jobsLeft([actions])) > 0) return false;
        throw new Error('drainRate: the backlog was gone before a completion was counted');
      }),
      ...workers,
    );
    const workersCpuMs = () => workers.reduce((sum, worker) => sum + treeCpuMs(worker.pid), 0);
    const before = await completed();
    const started = performance.now();
    const cpuBefore = [workersCpuMs(), alsoPid ? treeCpuMs(alsoPid) : 0, await redisCpuMs(redis)];
    const windowEndsAt = started + windowSeconds * 1000;
    // The backlog is gone, or the window is over with enough completions to count.
    await whileUp(
      until(
        async () =>
          (await jobsLeft([actions])) === 0 ||
          (performance.now() >= windowEndsAt && (await completed()) - before >= MIN_COMPLETIONS),
      ),
      ...workers,
    );
    const after = await completed();
    const elapsed = (performance.now() - started) / 1000;
    const cpuAfter = [workersCpuMs(), alsoPid ? treeCpuMs(alsoPid) : 0, await redisCpuMs(redis)];
    const perAction = (i: number) =>
      Math.round(
        (((cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0)) / Math.max(1, after - before)) * 1000,
      ) / 1000;
    return {
      workerCpuMsPerAction: perAction(0),
      alsoCpuMsPerAction: perAction(1),
      /** Redis's, the bench's reads of the queue's counts included (every 50 ms). */
      redisCpuMsPerAction: perAction(2),
      perSecond: Math.round((after - before) / elapsed),
      completed: after - before,
      seconds: Math.round(elapsed * 100) / 100,
      workers,
    };
  } finally {
    await actions.close();
    redis.disconnect();
  }
}

/** Resolves once the record stream is empty: the recorder deletes each change after its commit. */
async function streamEmptied(bench: BenchRun): Promise<void> {
  const redis = new Redis(bench.options.redisUrl);
  try {
    while ((await redis.xlen(recordStreamKey(bench.prefix))) > 0) await delay(200);
  } finally {
    redis.disconnect();
  }
}
