import { duplicateRedis } from '@pw/shared/runtime';
import type { ActionQueues } from '@pw/shared/queue';
import { CircuitBreaker } from './circuit-breaker.js';
import { CircuitCopy } from './circuit-copy.js';
import { CircuitGate } from './circuit-gate.js';
import { circuitTarget } from './config.js';
import type { WorkerDeps } from './create-worker.js';

/** What the circuits are made from: the worker's settings they read. */
export type CircuitWiringDeps = Pick<
  WorkerDeps,
  'connection' | 'partitions' | 'targets' | 'circuit' | 'log' | 'metrics'
>;

/** The circuits of one worker process. */
export interface CircuitWiring {
  /** The circuits in Redis, shared by every worker process. */
  store: CircuitBreaker;
  /** The processor's side of them: asks before a call, reports after it. */
  gate: CircuitGate;
  /** This process's copy of the circuits. */
  copy: CircuitCopy;
  /** Stops the copy and drops its subscriber connection. */
  stop(): void;
}

/**
 * The circuits of this worker's targets (the default and one per market), named in Redis so the
 * dashboard lists them, read at each scrape for `partner_circuit_open`, and copied in this
 * process (`CircuitCopy`) so that a try on a clean circuit writes nothing to it.
 *
 * Why here: the breaker, its copy (with its own subscriber connection), the gate over both and
 * the metrics that read them are made and stopped together, once per process, for every
 * partition's processor to share. `leaseMs` is how long a probe or in-flight lease of a worker
 * that died stays held; `queues` finds the held jobs a closing circuit wakes. Registering the
 * targets and starting the copy are not awaited: a failure is logged, and the worker starts anyway.
 */
export function wireCircuits(
  deps: CircuitWiringDeps,
  queues: ActionQueues,
  leaseMs: number,
): CircuitWiring {
  const stores = deps.connection;
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
