import { Queue, Worker } from 'bullmq';
import { bullmqTelemetry, QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared';
import type { ActionJobData, ActionsConfig, Logger, OutcomeStore, RedisClient } from '@pw/shared';
import { ActionLimits } from './action-limits.js';
import { processAction } from './action-processor.js';
import { ActionStart } from './action-start.js';
import type { ActionProcessorDeps } from './action-processor.js';
import { actionBackoff } from './backoff.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { CircuitGate } from './circuit-gate.js';
import { circuitTarget } from './config.js';
import type { PartnerTarget } from './config.js';
import type { MarketTable } from './market-table.js';
import type { WorkerMetrics } from './metrics.js';
import type { PartnerApi } from './partner-api.js';
import { recordStalledFailure } from './stalled-job-recorder.js';
import type { StalledJobDeps } from './stalled-job-recorder.js';

export interface WorkerDeps {
  /** BullMQ's connection (it makes its own blocking one from it). */
  connection: RedisClient;
  /**
   * The connection of the worker's own stores (circuits, action starts, action limits), best made
   * with `enableAutoPipelining`: the commands of the jobs running at once then share one write.
   * @defaultValue `connection`
   */
  storeConnection?: RedisClient;
  queuePrefix: string;
  outcomes: OutcomeStore;
  api: PartnerApi;
  targets: { fallback: PartnerTarget; byMarket: MarketTable<PartnerTarget> };
  actionsConfig: ActionsConfig;
  log: Logger;
  metrics: WorkerMetrics;
  /** Jobs at once. @defaultValue 20 */
  concurrency?: number;
  /** Lock duration; a dead worker's jobs are taken over after about this long. @defaultValue 30000 */
  lockMs?: number;
  /** Times a job may be taken over from a dead or stuck worker before it fails. @defaultValue 3 */
  maxStalledCount?: number;
  /** The circuit breaker (`CIRCUIT_*`). @defaultValue threshold 10, probe every 5000 ms */
  circuit?: { failureThreshold: number; probeIntervalMs: number };
}

export interface RunningWorker {
  actions: Worker<ActionJobData>;
  /** Stops taking jobs and waits for active ones; `force` returns them to the queue at once. */
  close(force?: boolean): Promise<void>;
}

/** The options of the `actions` worker. */
function workerOptions(deps: WorkerDeps) {
  const lockDuration = deps.lockMs ?? 30_000;
  return {
    connection: deps.connection,
    prefix: deps.queuePrefix,
    concurrency: deps.concurrency ?? 20,
    lockDuration,
    stalledInterval: lockDuration,
    maxStalledCount: deps.maxStalledCount ?? 3,
    // Back at work within a second once Redis is reachable again (BullMQ waits 15 s by default).
    runRetryDelay: 1000,
    // With tracing on: each job's span continues the trace of the request that queued it.
    ...bullmqTelemetry(),
  };
}

/**
 * The circuits of this worker's targets (the default and one per market), named in Redis so the
 * dashboard lists them, and read at each scrape for `partner_circuit_open`.
 */
function circuits(deps: WorkerDeps, actionsQueue: Queue<ActionJobData>, leaseMs: number) {
  const store = new CircuitBreaker(deps.storeConnection ?? deps.connection, {
    queuePrefix: deps.queuePrefix,
    failureThreshold: deps.circuit?.failureThreshold ?? 10,
    probeIntervalMs: deps.circuit?.probeIntervalMs ?? 5000,
    leaseMs,
    jobKeyPrefix: actionsQueue.toKey(''),
  });
  const all = [deps.targets.fallback, ...deps.targets.byMarket.values()].map(circuitTarget);
  const targets = [...new Set(all)];
  void store
    .register(targets)
    .catch((error: unknown) => deps.log.warn({ err: error }, 'circuits not registered yet'));
  deps.metrics.watchCircuits(() => Promise.all(targets.map((target) => store.view(target))));
  return { store, gate: new CircuitGate({ ...deps, circuits: store, actionsQueue }) };
}

/**
 * The worker: the action processor on `actions` runs each action job the ingress's intake added
 * against the partner API, and a listener of its own failures records the jobs BullMQ fails for
 * stalling.
 */
export function createWorker(deps: WorkerDeps): RunningWorker {
  const { connection, queuePrefix: prefix, log } = deps;
  const options = workerOptions(deps);
  // The circuit gate reads the jobs it holds, and wakes them, through it.
  const actionsQueue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection,
    prefix,
    streams: QUEUE_STREAMS,
  });
  const stores = deps.storeConnection ?? connection;
  // A slot, probe or in-flight lease of a worker that died is free again once its job could
  // have run its course.
  const leaseMs = options.lockDuration + 2 * deps.api.timeoutMs;
  const limits = new ActionLimits(stores, prefix, leaseMs);
  const circuit = circuits(deps, actionsQueue, leaseMs);
  const start = new ActionStart(stores, prefix, circuit.store, deps.outcomes);

  const actionDeps: ActionProcessorDeps = { ...deps, start, limits, circuits: circuit.gate };
  const actions = new Worker<ActionJobData>(
    QUEUE_NAMES.actions,
    (job, token, signal) => processAction(job, actionDeps, token, signal),
    { ...options, settings: { backoffStrategy: actionBackoff } },
  );

  // No reader of the queue's event stream: BullMQ fails a job that stalled too often in the
  // worker that takes it next, which tells only its own listeners.
  const stalledDeps: StalledJobDeps = deps;
  actions.on('failed', (job, error) => void recordStalledFailure(job, error, stalledDeps));

  actions.on('error', (error) => log.error({ err: error }, 'worker error'));

  return {
    actions,
    async close(force = false) {
      await actions.close(force);
      await actionsQueue.close();
    },
  };
}
