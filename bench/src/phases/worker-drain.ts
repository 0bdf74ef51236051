// Our worker draining the backlog the ingress phase queued while it was stopped: actions per
// second, to compare with the raw no-op worker.
import type { EventEmitter } from 'node:events';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { Queue, QueueEvents } from 'bullmq';
import { QUEUE_NAMES } from '@pw/shared';
import type { ChildRun } from '@pw/test-utils';
import type { BenchRun } from '../bench-run.js';
import { RssSampler } from '../process-usage.js';
import { startRecorder, startWorker, whileUp } from '../processes.js';
import { benchDatabase } from '../record-store.js';
import type { Sandbox } from '../processes.js';
import type { Figures } from '../results.js';

export interface DrainFigures {
  worker: Figures['worker'];
  /** The sandbox's peak RSS while the worker called it. */
  sandboxRssMb: number;
}

export async function workerDrainPhase(bench: BenchRun, sandbox: Sandbox): Promise<DrainFigures> {
  bench.log('worker draining the backlog the ingress runs queued');
  const { redisUrl, concurrency } = bench.options;
  const backlogQueue = new Queue(QUEUE_NAMES.webhooks, {
    connection: { url: redisUrl },
    prefix: bench.prefix,
  });
  const backlog = await backlogQueue.count();
  await backlogQueue.close();
  const sampler = new RssSampler({ sandbox: sandbox.child.pid });
  const drained = await whileUp(
    drainRate(bench, async () => {
      const worker = await startWorker(bench, sandbox);
      sampler.add('worker', worker.pid);
      return worker;
    }),
    sandbox.child,
  );
  await drained.worker.stop();
  // The same again on the rest of the backlog, with the recorder writing every change to
  // PostgreSQL as it does in a deployment: the cost of recording.
  bench.log('worker draining the rest, the recorder writing to PostgreSQL');
  const database = await benchDatabase(bench);
  const recorder = await startRecorder(bench, database.url);
  sampler.add('recorder', recorder.pid);
  const recording = await whileUp(
    drainRate(bench, () => startWorker(bench, sandbox)),
    sandbox.child,
    recorder,
  );
  await recording.worker.stop();
  const recordedChanges = await database.recordedChanges();
  const rss = sampler.stop();
  await recorder.stop();
  await database.close();
  await bench.clearKeys();
  return {
    worker: {
      actions_per_s: drained.perSecond,
      actions_per_s_recording: recording.perSecond,
      recorded_changes: recordedChanges,
      actions_counted: drained.completed,
      window_s: drained.seconds,
      backlog_webhooks: backlog,
      concurrency,
      rss_mb: rss.worker ?? 0,
    },
    sandboxRssMb: rss.sandbox ?? 0,
  };
}

/**
 * Completed actions per second of the worker `start` starts, counted from its first completion
 * for the phase's duration, or until the backlog is gone.
 */
async function drainRate(bench: BenchRun, start: () => Promise<ChildRun>) {
  const connection = { url: bench.options.redisUrl };
  const { prefix } = bench;
  const actions = new Queue(QUEUE_NAMES.actions, { connection, prefix });
  const webhooks = new Queue(QUEUE_NAMES.webhooks, { connection, prefix });
  const events = new QueueEvents(QUEUE_NAMES.actions, { connection, prefix });
  try {
    await events.waitUntilReady();
    const firstCompletion = once(events as EventEmitter, 'completed');
    const worker = await start();
    await whileUp(firstCompletion, worker);
    const completed = async () => (await actions.getJobCounts('completed')).completed ?? 0;
    const before = await completed();
    const started = performance.now();
    // The actions queue empties now and then while the fan-out catches up: check both queues.
    const backlogGone = new Promise<void>((resolve) => {
      events.on('drained', () => {
        void jobsLeft([actions, webhooks]).then((n) => n === 0 && resolve());
      });
    });
    const window = new AbortController();
    const windowEnds = delay(bench.options.duration * 1000, undefined, { signal: window.signal });
    await whileUp(Promise.race([windowEnds, backlogGone]), worker);
    window.abort();
    const after = await completed();
    const elapsed = (performance.now() - started) / 1000;
    return {
      perSecond: Math.round((after - before) / elapsed),
      completed: after - before,
      seconds: Math.round(elapsed * 100) / 100,
      worker,
    };
  } finally {
    await Promise.all([events.close(), actions.close(), webhooks.close()]);
  }
}

/** Jobs not done yet in `queues`: waiting, active, delayed or prioritized. */
async function jobsLeft(queues: Queue[]): Promise<number> {
  const counts = await Promise.all(
    queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
  );
  return counts.flatMap((byState) => Object.values(byState)).reduce((sum, n) => sum + n, 0);
}
