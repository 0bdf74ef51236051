// Webhooks offered at a rate the worker sustains (`--rate`; by default half the rate it drained
// earlier in the run): from enqueue, and from the ack, to the start of each webhook's first action,
// and from the ack to the completion of its last (docs/performance.md). At that rate nothing waits
// in a backlog: these are the latencies of the path itself.
import { Queue } from 'bullmq';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared/queue';
import type { ChildRun } from '@pw/test-utils';
import type { BenchRun } from '../bench-run.js';
import { postPaced } from '../paced.js';
import { percentile } from '../percentiles.js';
import { jobsLeft, until } from '../poll.js';
import { startWorker, whileUp } from '../processes.js';
import type { Sandbox, Server } from '../processes.js';
import type { Figures, StartLatencies } from '../results.js';

/** Webhooks sampled at most, spread evenly over the phase. */
const SAMPLE_SIZE = 2000;
/** A worker that stops finishing actions (it should not) leaves the rest of the sample out. */
const GIVE_UP_AFTER_MS = 120_000;

/** Leaves `ingress` running, and the run's keys in Redis: the caller stops and deletes them. */
export async function latencyPhase(
  bench: BenchRun,
  ingress: Server,
  sandbox: Sandbox,
  rate: number,
): Promise<Omit<Figures['paced'], 'halvings'>> {
  bench.log(`${rate} webhooks/s offered: enqueue and ack to first action start, ack to last done`);
  const worker = await startWorker(bench, sandbox);
  // Evenly spaced: autocannon's `overallRate` sends each connection's share of a second back to
  // back, which made bursts of 50 webhooks that queued behind each other in the worker.
  const { duration, connections, warmupSeconds } = bench.options;
  const send = (seconds: number, onAnswer?: (status: number, body: string) => void) => {
    bench.pool.fill(Math.ceil(rate * seconds) + 1);
    return whileUp(
      postPaced({
        url: ingress.url,
        rate,
        seconds,
        connections,
        whenBusy: 'queue',
        next: () => bench.pool.take(),
        onAnswer,
      }),
      ingress.child,
      worker,
      sandbox.child,
    );
  };
  // A warm-up at the same rate, not sampled: the new worker's first token and JIT.
  if (warmupSeconds > 0) await send(warmupSeconds);
  const acks = new Map<string, Ack>();
  const paced = await send(duration, (status, body) => {
    if (status !== 200) return;
    const at = Date.now();
    const ack = JSON.parse(body) as { webhook_id: string; actions_triggered: string[] };
    if (!acks.has(ack.webhook_id)) acks.set(ack.webhook_id, { at, actions: ack.actions_triggered });
  });
  const latency = await latencies(bench, acks, [worker, sandbox.child]);
  await worker.stop();
  return {
    offered_per_s: rate,
    accepted_per_s: Math.round((paced.answers.all?.['200'] ?? 0) / paced.seconds),
    ...latency,
  };
}

/** When a webhook was acknowledged, and its actions. */
interface Ack {
  at: number;
  actions: string[];
}

/** When a webhook was enqueued, its first action started and (once all are done) its last ended. */
interface Times {
  enqueuedAt: number;
  firstStart?: number;
  lastDone?: number;
}

/**
 * The latencies of up to 2,000 acknowledged webhooks, read from their jobs' own times once the
 * queue has run them all (not from its events stream while the phase runs: a reader of every
 * event would load the cores the path shares).
 */
async function latencies(
  bench: BenchRun,
  acks: Map<string, Ack>,
  processes: ChildRun[],
): Promise<StartLatencies> {
  const connection = { url: bench.options.redisUrl };
  const { prefix } = bench;
  const actions = new Queue(QUEUE_NAMES.actions, { connection, prefix, streams: QUEUE_STREAMS });
  const enqueueToStart: number[] = [];
  const ackToStart: number[] = [];
  const ackToDone: number[] = [];
  try {
    const giveUpAt = Date.now() + GIVE_UP_AFTER_MS;
    await whileUp(
      until(async () => (await jobsLeft([actions])) === 0 || Date.now() > giveUpAt),
      ...processes,
    );
    for (const [webhookId, { at: ackAt, actions: names }] of sampleOf(acks, bench.options.quick)) {
      const times = await timesOf(actions, webhookId, names);
      if (times?.firstStart === undefined || times.lastDone === undefined) continue;
      enqueueToStart.push(times.firstStart - times.enqueuedAt);
      ackToStart.push(times.firstStart - ackAt);
      ackToDone.push(times.lastDone - ackAt);
    }
  } finally {
    await actions.close();
  }
  return {
    sampled: enqueueToStart.length,
    enqueue_to_start_p50_ms: percentile(enqueueToStart, 50),
    enqueue_to_start_p99_ms: percentile(enqueueToStart, 99),
    ack_to_start_p50_ms: percentile(ackToStart, 50),
    ack_to_start_p99_ms: percentile(ackToStart, 99),
    ack_to_done_p50_ms: percentile(ackToDone, 50),
    ack_to_done_p99_ms: percentile(ackToDone, 99),
  };
}

/** Evenly spread acks; --quick takes the first 200 only, not to wait for a slow worker's backlog. */
function sampleOf(acks: Map<string, Ack>, quick: boolean): [string, Ack][] {
  const all = [...acks];
  const step = quick ? 1 : Math.max(1, Math.ceil(all.length / SAMPLE_SIZE));
  return all.filter((_, index) => index % step === 0).slice(0, quick ? 200 : undefined);
}

/**
 * The webhook's times from its action jobs (the ingress adds them all at once: the enqueue is
 * their timestamp): `lastDone` only once every one has finished.
 */
async function timesOf(
  actions: Queue,
  webhookId: string,
  names: string[],
): Promise<Times | undefined> {
  const jobs = await Promise.all(names.map((action) => actions.getJob(`${webhookId}.${action}`)));
  const found = jobs.filter((job) => job !== undefined);
  if (found.length === 0) return undefined;
  const starts = found.flatMap((job) => (job.processedOn ? [job.processedOn] : []));
  const ends = found.flatMap((job) => (job.finishedOn ? [job.finishedOn] : []));
  return {
    enqueuedAt: Math.min(...found.map((job) => job.timestamp)),
    firstStart: starts.length > 0 ? Math.min(...starts) : undefined,
    lastDone: ends.length === names.length ? Math.max(...ends) : undefined,
  };
}
