import type { Job, Worker } from 'bullmq';
import type { ActionJobData } from '@pw/shared/queue';
import type { processAction } from './action-processor.js';
import { SlotGate } from './slot-gate.js';

/** The processor a partition's BullMQ worker runs on each job it takes. */
export type ActionProcessor = (
  job: Job<ActionJobData>,
  token?: string,
  signal?: AbortSignal,
) => ReturnType<typeof processAction>;

/** The slots of one process's jobs at once, shared by the BullMQ workers of its partitions. */
export interface SharedSlots {
  /** The slots: `total` jobs at once over every worker. */
  gate: SlotGate;
  /** How many jobs the worker at position `n` may hold now: its BullMQ `concurrency`. */
  fetchLimit: (n: number) => number;
  /** The processor of the worker at `position`, which runs `run` in a slot. */
  processor(position: number, run: ActionProcessor): ActionProcessor;
}

/**
 * The slots shared by the partitions' workers, and how many jobs each may hold (fetched, waiting
 * for a slot or running): its own plus its share of the free slots, at least one more.
 *
 * Why: BullMQ's `concurrency` is per worker, but `WORKER_CONCURRENCY` is the process's total over
 * every partition it takes. A BullMQ worker fetches jobs in a row up to its `concurrency` before
 * it runs any, so a worker allowed the whole `WORKER_CONCURRENCY` would take that many from its
 * partition while the others' jobs hold the slots; with shares, fewer than two jobs per partition
 * are fetched beyond the slots. A worker with none waiting may fetch one: it waits at the gate,
 * which hands it the next slot freed, because a raised `concurrency` is only seen by a BullMQ
 * worker once one of its own jobs ends (a partition whose jobs are all in long calls would
 * otherwise leave freed slots unused).
 *
 * `workers` is read at each change of the slots, not copied: the caller pushes each partition's
 * worker into it, in position order, once that worker is made.
 */
export function sharedSlots(
  total: number,
  count: number,
  workers: readonly Worker<ActionJobData>[],
): SharedSlots {
  // Per worker: its jobs in the gate (waiting or running), and those running.
  const holding = Array.from({ length: count }, () => 0);
  const running = Array.from({ length: count }, () => 0);
  const fetchLimit = (n: number) => {
    const waiting = holding[n]! - running[n]!;
    return holding[n]! + Math.max(Math.ceil(gate.free / count), waiting === 0 ? 1 : 0);
  };
  const update = () => workers.forEach((worker, n) => (worker.concurrency = fetchLimit(n)));
  const gate: SlotGate = new SlotGate(total, update);
  const change = (counts: number[], n: number, by: number) => {
    counts[n]! += by;
    update();
  };
  return {
    gate,
    fetchLimit,
    processor(position: number, run: ActionProcessor): ActionProcessor {
      return async (job, token, signal) => {
        change(holding, position, 1);
        try {
          return await gate.run(async () => {
            change(running, position, 1);
            try {
              return await run(job, token, signal);
            } finally {
              change(running, position, -1);
            }
          });
        } finally {
          change(holding, position, -1);
        }
      };
    },
  };
}
