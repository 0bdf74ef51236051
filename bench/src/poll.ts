// Waiting on Redis-side progress without reading the queue's events stream: a reader of every
// event (four or so per action) would load the cores the measured processes share.
import { setTimeout as delay } from 'node:timers/promises';
import type { Queue } from 'bullmq';

/** How often progress is read from Redis. */
export const POLL_MS = 50;

/** Resolves once `done` says so, asking every `POLL_MS`. */
export async function until(done: () => Promise<boolean>): Promise<void> {
  while (!(await done())) await delay(POLL_MS);
}

/** Jobs not done yet in `queues`: waiting, active, delayed or prioritized. */
export async function jobsLeft(queues: Queue[]): Promise<number> {
  const counts = await Promise.all(
    queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
  );
  return counts.flatMap((byState) => Object.values(byState)).reduce((sum, n) => sum + n, 0);
}
