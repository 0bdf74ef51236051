import type { Job, Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { ActionJobData } from '@pw/shared/queue';
import type { ActionProcessor } from './shared-slots.js';
import { sharedSlots } from './shared-slots.js';

/** A job that runs until the test ends it. */
function pending() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

/** Stand-ins for BullMQ workers: `sharedSlots` only sets their `concurrency`. */
function fakeWorkers(count: number) {
  return Array.from({ length: count }, () => ({
    concurrency: 0,
  })) as unknown as Worker<ActionJobData>[];
}

/** A processor running until `until` ends, and the jobs that started. */
function waitingRun(until: Promise<void>) {
  const started: string[] = [];
  const run = (async (job: Job<ActionJobData>) => {
    started.push(job.id!);
    await until;
  }) as unknown as ActionProcessor;
  return { run, started };
}

const job = (id: string) => ({ id }) as Job<ActionJobData>;

describe('the slots shared by the partitions’ workers', () => {
  it('lets each worker fetch its share of the free slots, and one more with none waiting', async () => {
    const workers = fakeWorkers(2);
    const slots = sharedSlots(4, 2, workers);
    expect([slots.fetchLimit(0), slots.fetchLimit(1)]).toEqual([2, 2]);

    const busy = pending();
    const first = waitingRun(busy.done);
    const process0 = slots.processor(0, first.run);
    const runs = ['a', 'b', 'c', 'd'].map((id) => process0(job(id)));
    await Promise.resolve();
    // Worker 0 holds every slot: it may fetch one more, worker 1 one (which waits at the gate).
    expect(slots.gate.free).toBe(0);
    expect(workers.map((worker) => worker.concurrency)).toEqual([5, 1]);

    const other = pending();
    const second = waitingRun(other.done);
    const waiting = slots.processor(1, second.run)(job('e'));
    await Promise.resolve();
    expect(second.started).toEqual([]);
    expect(workers.map((worker) => worker.concurrency)).toEqual([5, 1]);

    busy.end();
    await Promise.all(runs);
    await Promise.resolve();
    // A freed slot went to the job that waited.
    expect(second.started).toEqual(['e']);
    other.end();
    await waiting;
    expect(slots.gate.free).toBe(4);
    expect(workers.map((worker) => worker.concurrency)).toEqual([2, 2]);
  });
});
