// Baselines: BullMQ alone, enqueueing and with a no-op worker (the AOF phase enqueues too).
import { Queue, Worker } from 'bullmq';
import type { BenchRun } from '../bench-run.js';
import type { Figures } from '../results.js';

export async function rawBullmqPhase(bench: BenchRun): Promise<Figures['raw_bullmq']> {
  bench.log('baseline: raw BullMQ enqueue (100 in flight) and no-op worker');
  const { redisUrl, duration, quick, concurrency } = bench.options;
  const enqueue = await rawEnqueueRate(redisUrl, bench.prefix, duration, bench.signal);
  const jobs = quick ? 2000 : 20_000;
  const worker = await rawWorkerRate(redisUrl, bench.prefix, jobs, concurrency, bench.signal);
  return { enqueue_per_s: enqueue, noop_worker_jobs_per_s: worker, concurrency };
}

/** BullMQ alone: `queue.add` of a 1 KB job with `inFlight` adds outstanding, for the duration. */
export async function rawEnqueueRate(
  redisUrl: string,
  prefix: string,
  durationSeconds: number,
  stop: AbortSignal,
  inFlight = 100,
): Promise<number> {
  const queue = new Queue('raw-enqueue', { connection: { url: redisUrl }, prefix });
  const payload = { body: 'x'.repeat(1000) };
  const stopAt = Date.now() + durationSeconds * 1000;
  let added = 0;
  const lane = async () => {
    while (Date.now() < stopAt && !stop.aborted) {
      await queue.add('raw', payload, { removeOnComplete: true });
      added++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: inFlight }, lane));
  const seconds = (Date.now() - started) / 1000;
  await queue.obliterate({ force: true });
  await queue.close();
  return Math.round(added / seconds);
}

/** BullMQ alone: a no-op Worker at `concurrency` draining `count` jobs added beforehand. */
export async function rawWorkerRate(
  redisUrl: string,
  prefix: string,
  count: number,
  concurrency: number,
  stop: AbortSignal,
): Promise<number> {
  const connection = { url: redisUrl };
  const queue = new Queue('raw-worker', { connection, prefix });
  const payload = { body: 'x'.repeat(1000) };
  for (let i = 0; i < count && !stop.aborted; i += 1000) {
    const size = Math.min(1000, count - i);
    await queue.addBulk(
      Array.from({ length: size }, () => ({
        name: 'raw',
        data: payload,
        opts: { removeOnComplete: true },
      })),
    );
  }
  let done = 0;
  let resolveDone: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (resolveDone = resolve));
  const started = Date.now();
  const worker = new Worker(
    'raw-worker',
    () => {
      if (++done === count) resolveDone();
      return Promise.resolve();
    },
    { connection, prefix, concurrency },
  );
  stop.addEventListener('abort', resolveDone);
  await allDone;
  const seconds = (Date.now() - started) / 1000;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return Math.round(count / seconds);
}
