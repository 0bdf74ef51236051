// 1,000 webhooks/s offered, a rate the worker sustains: from enqueue, and from the ack, to the
// start of each webhook's first action (contract section 9).
import { setTimeout as delay } from 'node:timers/promises';
import { Queue, QueueEvents } from 'bullmq';
import { QUEUE_NAMES } from '@pw/shared';
import type { WebhookJobData } from '@pw/shared';
import type { ChildRun } from '@pw/test-utils';
import type { BenchRun } from '../bench-run.js';
import { measure } from '../measure.js';
import { percentile } from '../percentiles.js';
import { startWorker, whileUp } from '../processes.js';
import type { Sandbox, Server } from '../processes.js';
import type { Figures, StartLatencies } from '../results.js';

const OFFERED_PER_SECOND = 1000;
/** Webhooks sampled at most, spread evenly over the phase. */
const SAMPLE_SIZE = 2000;
/** A worker that stops starting actions (it should not) leaves the rest of the sample out. */
const GIVE_UP_AFTER_MS = 120_000;

/** Leaves `ingress` running, and the run's keys in Redis: the caller stops and deletes them. */
export async function latencyPhase(
  bench: BenchRun,
  ingress: Server,
  sandbox: Sandbox,
): Promise<Figures['paced_1000']> {
  bench.log('1,000 webhooks/s offered: enqueue and ack to action start');
  const worker = await startWorker(bench, sandbox);
  const paced = await whileUp(
    measure(bench, ingress.url, { rate: OFFERED_PER_SECOND, warmup: false, recordAcks: true }),
    ingress.child,
    worker,
    sandbox.child,
  );
  const latency = await startLatencies(bench, paced.acks ?? new Map<string, number>(), [
    worker,
    sandbox.child,
  ]);
  await worker.stop();
  return { offered_per_s: OFFERED_PER_SECOND, accepted_per_s: paced.acceptedPerSecond, ...latency };
}

/**
 * Enqueue-to-start and ack-to-start (the earliest of a webhook's action jobs' `processedOn`) of up
 * to 2,000 acknowledged webhooks. Waits, woken by the actions queue's events, until each sampled
 * webhook has an action started.
 */
async function startLatencies(
  bench: BenchRun,
  acks: Map<string, number>,
  processes: ChildRun[],
): Promise<StartLatencies> {
  const connection = { url: bench.options.redisUrl };
  const { prefix } = bench;
  const webhooks = new Queue<WebhookJobData>(QUEUE_NAMES.webhooks, { connection, prefix });
  const actions = new Queue(QUEUE_NAMES.actions, { connection, prefix });
  const events = new QueueEvents(QUEUE_NAMES.actions, { connection, prefix });
  const firstStart = (webhookId: string) => firstActionStart(webhooks, actions, webhookId);
  const waitForStart = watchStarts(events, processes);
  const enqueueToStart: number[] = [];
  const ackToStart: number[] = [];
  try {
    await events.waitUntilReady();
    const giveUpAt = Date.now() + GIVE_UP_AFTER_MS;
    for (const [webhookId, ackAt] of sampleOf(acks, bench.options.quick)) {
      let started = await firstStart(webhookId);
      if (!started) {
        await waitForStart(webhookId, giveUpAt);
        started = await firstStart(webhookId);
      }
      if (!started) continue;
      enqueueToStart.push(started.at - started.enqueuedAt);
      ackToStart.push(started.at - ackAt);
    }
  } finally {
    await Promise.all([events.close(), webhooks.close(), actions.close()]);
  }
  return {
    sampled: enqueueToStart.length,
    enqueue_to_start_p50_ms: percentile(enqueueToStart, 50),
    enqueue_to_start_p99_ms: percentile(enqueueToStart, 99),
    ack_to_start_p50_ms: percentile(ackToStart, 50),
    ack_to_start_p99_ms: percentile(ackToStart, 99),
  };
}

/** Evenly spread acks; --quick takes the first 200 only, not to wait for a slow worker's backlog. */
function sampleOf(acks: Map<string, number>, quick: boolean): [string, number][] {
  const all = [...acks];
  const step = quick ? 1 : Math.max(1, Math.ceil(all.length / SAMPLE_SIZE));
  return all.filter((_, index) => index % step === 0).slice(0, quick ? 200 : undefined);
}

/** When the webhook was enqueued and its first action started, if one has. */
async function firstActionStart(
  webhooks: Queue<WebhookJobData>,
  actions: Queue,
  webhookId: string,
): Promise<{ at: number; enqueuedAt: number } | undefined> {
  const webhook = await webhooks.getJob(webhookId);
  if (!webhook) return undefined;
  const jobs = await Promise.all(
    webhook.data.actions.map((action) => actions.getJob(`${webhookId}.${action}`)),
  );
  const starts = jobs.flatMap((job) => (job?.processedOn ? [job.processedOn] : []));
  return starts.length > 0 ? { at: Math.min(...starts), enqueuedAt: webhook.timestamp } : undefined;
}

/**
 * Listens for action jobs going active; the function returned resolves once a webhook has had
 * one (`<webhook id>.<action>`), or at `giveUpAt`, and rejects if one of `processes` exits.
 */
function watchStarts(events: QueueEvents, processes: ChildRun[]) {
  const started = new Set<string>();
  const waiters = new Map<string, () => void>();
  events.on('active', ({ jobId }) => {
    const webhookId = jobId.slice(0, jobId.lastIndexOf('.'));
    started.add(webhookId);
    waiters.get(webhookId)?.();
  });
  return async (webhookId: string, giveUpAt: number): Promise<void> => {
    if (started.has(webhookId)) return;
    const woken = new Promise<void>((resolve) => waiters.set(webhookId, resolve));
    const timeout = new AbortController();
    const givingUp = delay(Math.max(0, giveUpAt - Date.now()), undefined, {
      signal: timeout.signal,
    }).catch(() => undefined);
    try {
      await whileUp(Promise.race([woken, givingUp]), ...processes);
    } finally {
      timeout.abort();
      waiters.delete(webhookId);
    }
  };
}
