import { Worker } from 'bullmq';
import { ActionQueues, QUEUE_NAMES } from '@pw/shared/queue';
import { bullmqTelemetry } from '@pw/shared/runtime';
import type { ActionsConfig } from '@pw/shared/actions';
import type { OutcomeStore } from '@pw/shared/outcomes';
import type { ActionJobData, Partitions } from '@pw/shared/queue';
import type { Logger, RedisClient, RedisClientOptions } from '@pw/shared/runtime';
import { ActionLimits } from './action-limits.js';
import { processAction } from './action-processor.js';
import type { ActionProcessorDeps } from './action-processor.js';
import { ActionStart } from './action-start.js';
import { EntityTurns } from './entity-turns.js';
import { actionBackoff } from './backoff.js';
import type { CircuitCopy } from './circuit-copy.js';
import { wireCircuits } from './circuit-wiring.js';
import type { PartnerTarget } from './config.js';
import type { MarketTable } from './market-table.js';
import type { WorkerMetrics } from './metrics.js';
import type { PartnerApi } from './partner-api.js';
import { sharedSlots } from './shared-slots.js';
import type { ActionProcessor } from './shared-slots.js';
import type { SlotGate } from './slot-gate.js';
import { recordStalledFailure } from './stalled-job-recorder.js';

export interface WorkerDeps {
  /**
   * The worker's one connection, made with `WORKER_REDIS_OPTIONS`: BullMQ's (it makes its own
   * blocking one from it) and its stores' (records, circuits, turns, limits). A call's end is
   * written on it ahead of BullMQ's move of the job, so Redis runs the two in that order
   * (docs/redis-cost.md).
   */
  connection: RedisClient;
  /** The queue partitions (`QUEUE_PARTITIONS`); `partitions.shared` prefixes the circuits and limits. */
  partitions: Partitions;
  /** The partitions to take jobs from (`WORKER_PARTITIONS`). @defaultValue every partition */
  workerPartitions?: readonly number[];
  /** The outcome records of each partition, by partition index. */
  outcomes: readonly OutcomeStore[];
  api: PartnerApi;
  targets: { fallback: PartnerTarget; byMarket: MarketTable<PartnerTarget> };
  actionsConfig: ActionsConfig;
  log: Logger;
  metrics: WorkerMetrics;
  /** Jobs at once, over every partition taken. @defaultValue 20 */
  concurrency?: number;
  /** Lock duration; a dead worker's jobs are taken over after about this long. @defaultValue 30000 */
  lockMs?: number;
  /** Times a job may be taken over from a dead or stuck worker before it fails. @defaultValue 3 */
  maxStalledCount?: number;
  /** The circuit breaker (`CIRCUIT_*`). @defaultValue threshold 10, probe every 5000 ms */
  circuit?: { failureThreshold: number; probeIntervalMs: number };
}

export interface RunningWorker {
  /** The BullMQ worker of each partition taken, in partition order. */
  workers: readonly Worker<ActionJobData>[];
  /** The first of them: the only one with one partition. */
  actions: Worker<ActionJobData>;
  /** The slots the partitions' workers share (none with one worker: BullMQ's concurrency). */
  slots: SlotGate | undefined;
  /** This process's copy of the circuits. */
  circuitCopy: CircuitCopy;
  /** Stops taking jobs and waits for active ones; `force` returns them to the queue at once. */
  close(force?: boolean): Promise<void>;
}

/**
 * The worker's connection: it retries forever rather than fail a command (BullMQ blocks on it),
 * and auto-pipelines, so that what the jobs running at once send in the same tick, a call's end
 * and BullMQ's move of its job among it, leaves in one write (docs/redis-cost.md).
 */
export const WORKER_REDIS_OPTIONS = {
  maxRetriesPerRequest: null,
  enableAutoPipelining: true,
} as const satisfies RedisClientOptions;

/** The options of each partition's `actions` worker. */
function workerOptions(deps: WorkerDeps) {
  const lockDuration = deps.lockMs ?? 30_000;
  return {
    connection: deps.connection,
    concurrency: deps.concurrency ?? 20,
    lockDuration,
    stalledInterval: lockDuration,
    maxStalledCount: deps.maxStalledCount ?? 3,
    // Back at work within a second once Redis is reachable again (BullMQ waits 15 s by default).
    runRetryDelay: 1000,
    settings: { backoffStrategy: actionBackoff },
    // With tracing on: each job's span continues the trace of the request that queued it.
    ...bullmqTelemetry(),
  };
}

/**
 * The worker: one BullMQ worker on the `actions` queue of each partition taken, running the
 * action processor on each job the ingress's intake added, and a listener of its own failures
 * that records the jobs BullMQ fails for stalling. With several partitions, a `SlotGate` keeps
 * `concurrency` the process's total of jobs at once.
 */
export function createWorker(deps: WorkerDeps): RunningWorker {
  const { partitions, log } = deps;
  const options = workerOptions(deps);
  const taken = deps.workerPartitions ?? partitions.all();
  if (taken.length === 0) throw new RangeError('a worker takes jobs from one partition at least');
  const queues = new ActionQueues(deps.connection, partitions);
  const stores = deps.connection;
  // A slot, probe or in-flight lease of a worker that died is free again once its job could
  // have run its course.
  const leaseMs = options.lockDuration + 2 * deps.api.timeoutMs;
  const limits = new ActionLimits(stores, partitions.shared, leaseMs);
  const circuit = wireCircuits(deps, queues, leaseMs);

  const workers: Worker<ActionJobData>[] = [];
  const slots =
    taken.length > 1 ? sharedSlots(options.concurrency, taken.length, workers) : undefined;
  for (const index of taken) {
    // Records written on BullMQ's connection: a call's end reaches Redis before its job's move.
    const outcomes = deps.outcomes[index]?.via(deps.connection);
    if (!outcomes) throw new RangeError(`no outcome store for partition ${index}`);
    const prefix = partitions.prefix(index);
    const turns = new EntityTurns(stores, prefix, leaseMs, (id) => queues.ofJob(id), log);
    const start = new ActionStart(stores, prefix, circuit.store, outcomes, circuit.copy, turns);
    const actionDeps: ActionProcessorDeps = {
      ...deps,
      outcomes,
      start,
      limits,
      turns,
      circuits: circuit.gate,
    };
    const run: ActionProcessor = (job, token, signal) =>
      processAction(job, actionDeps, token, signal);
    const worker = new Worker<ActionJobData>(
      QUEUE_NAMES.actions,
      slots ? slots.processor(workers.length, run) : run,
      { ...options, concurrency: slots?.fetchLimit(0) ?? options.concurrency, prefix },
    );
    // No reader of the queue's event stream: BullMQ fails a job that stalled too often in the
    // worker that takes it next, which tells only its own listeners.
    const stalledDeps = { ...deps, outcomes };
    worker.on('failed', (job, error) => void recordStalledFailure(job, error, stalledDeps));
    worker.on('error', (error) => log.error({ err: error, partition: index }, 'worker error'));
    workers.push(worker);
  }

  return {
    workers,
    actions: workers[0]!,
    slots: slots?.gate,
    circuitCopy: circuit.copy,
    async close(force = false) {
      await Promise.all(workers.map((worker) => worker.close(force)));
      circuit.stop();
      await queues.close();
    },
  };
}
