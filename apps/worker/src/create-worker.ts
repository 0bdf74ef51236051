import { Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { bullmqTelemetry, duplicateRedis, QUEUE_NAMES } from '@pw/shared';
import type {
  ActionJobData,
  ActionsConfig,
  Logger,
  OutcomeStore,
  Partitions,
  RedisClient,
} from '@pw/shared';
import { ActionLimits } from './action-limits.js';
import { processAction } from './action-processor.js';
import { ActionStart } from './action-start.js';
import type { ActionProcessorDeps } from './action-processor.js';
import { actionBackoff } from './backoff.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { CircuitCopy } from './circuit-copy.js';
import { CircuitGate } from './circuit-gate.js';
import { circuitTarget } from './config.js';
import type { PartnerTarget } from './config.js';
import type { MarketTable } from './market-table.js';
import type { WorkerMetrics } from './metrics.js';
import type { PartnerApi } from './partner-api.js';
import { ActionQueues } from '@pw/shared';
import { SlotGate } from './slot-gate.js';
import { recordStalledFailure } from './stalled-job-recorder.js';

export interface WorkerDeps {
  /** BullMQ's connection (it makes its own blocking one from it). */
  connection: RedisClient;
  /**
   * The connection of the worker's own stores (circuits, action starts, action limits), best made
   * with `enableAutoPipelining`: the commands of the jobs running at once then share one write.
   * @defaultValue `connection`
   */
  storeConnection?: RedisClient;
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
 * The circuits of this worker's targets (the default and one per market), named in Redis so the
 * dashboard lists them, read at each scrape for `partner_circuit_open`, and copied in this
 * process (`CircuitCopy`) so that a try on a clean circuit writes nothing to it.
 */
function circuits(deps: WorkerDeps, queues: ActionQueues, leaseMs: number) {
  const stores = deps.storeConnection ?? deps.connection;
  const { partitions } = deps;
  const store = new CircuitBreaker(stores, {
    queuePrefix: partitions.shared,
    failureThreshold: deps.circuit?.failureThreshold ?? 10,
    probeIntervalMs: deps.circuit?.probeIntervalMs ?? 5000,
    leaseMs,
    // With partitions the held jobs live under other hash tags than the circuit.
    jobKeyPrefix:
      partitions.count === 1
        ? queues.partition(0).toKey('')
        : (jobId: string) => queues.ofJob(jobId).toKey(jobId),
  });
  const all = [deps.targets.fallback, ...deps.targets.byMarket.values()].map(circuitTarget);
  const targets = [...new Set(all)];
  void store
    .register(targets)
    .catch((error: unknown) => deps.log.warn({ err: error }, 'circuits not registered yet'));
  deps.metrics.watchCircuits(() => Promise.all(targets.map((target) => store.view(target))));
  const subscriber = duplicateRedis(stores, {
    enableAutoPipelining: false,
    connectionName: 'pw-worker-circuits',
  });
  subscriber.on('error', (error) => deps.log.warn({ err: error }, 'Redis connection error'));
  const copy = new CircuitCopy(stores, subscriber, {
    queuePrefix: partitions.shared,
    refreshMs: deps.circuit?.probeIntervalMs ?? 5000,
    log: deps.log,
  });
  void copy
    .start(targets)
    .catch((error: unknown) => deps.log.warn({ err: error }, 'circuit copy not started'));
  const gate = new CircuitGate({
    ...deps,
    circuits: store,
    copy,
    queueOf: (id) => queues.ofJob(id),
  });
  return {
    store,
    gate,
    copy,
    stop() {
      copy.stop();
      subscriber.disconnect();
    },
  };
}

type ActionProcessor = (
  job: Job<ActionJobData>,
  token?: string,
  signal?: AbortSignal,
) => ReturnType<typeof processAction>;

/**
 * The slots shared by the partitions' workers, and how many jobs each may hold (fetched, waiting
 * for a slot or running): its own plus its share of the free slots, at least one more. A BullMQ
 * worker fetches jobs in a row up to its `concurrency` before it runs any, so a worker allowed the
 * whole `WORKER_CONCURRENCY` would take that many from its partition while the others' jobs hold
 * the slots; with shares, fewer than two jobs per partition are fetched beyond the slots. A
 * worker with none waiting may fetch one: it waits at the gate, which hands it the next slot
 * freed, because a raised `concurrency` is only seen by a BullMQ worker once one of its own jobs
 * ends (a partition whose jobs are all in long calls would otherwise leave freed slots unused).
 */
function sharedSlots(total: number, count: number, workers: readonly Worker<ActionJobData>[]) {
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
    /** The processor of the worker at `position`, which runs `run` in a slot. */
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
  const stores = deps.storeConnection ?? deps.connection;
  // A slot, probe or in-flight lease of a worker that died is free again once its job could
  // have run its course.
  const leaseMs = options.lockDuration + 2 * deps.api.timeoutMs;
  const limits = new ActionLimits(stores, partitions.shared, leaseMs);
  const circuit = circuits(deps, queues, leaseMs);

  const workers: Worker<ActionJobData>[] = [];
  const slots =
    taken.length > 1 ? sharedSlots(options.concurrency, taken.length, workers) : undefined;
  for (const index of taken) {
    const outcomes = deps.outcomes[index];
    if (!outcomes) throw new RangeError(`no outcome store for partition ${index}`);
    const prefix = partitions.prefix(index);
    const start = new ActionStart(stores, prefix, circuit.store, outcomes, circuit.copy);
    const actionDeps: ActionProcessorDeps = {
      ...deps,
      outcomes,
      start,
      limits,
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
