import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry } from 'prom-client';
import type { Registry } from 'prom-client';
import { onShutdownSignals, PwError } from '@pw/shared/runtime';
import type { FailureCode, Logger } from '@pw/shared/runtime';

const METRICS_REQUEST = 'pw:metrics-request';
const METRICS_REPLY = 'pw:metrics-reply';

interface MetricsRequest {
  type: typeof METRICS_REQUEST;
  id: string;
}
interface MetricsReply {
  type: typeof METRICS_REPLY;
  id: string;
  text?: string;
  error?: string;
}

/** An ingress process exited with an error while the cluster stopped. */
export const UNCLEAN_SHUTDOWN = 'unclean_shutdown' satisfies FailureCode;
/** The primary could not add up the processes' metrics. */
export const METRICS_UNAVAILABLE = 'metrics_unavailable' satisfies FailureCode;

/** A child that dies sooner than this after its start is not restarted: it would only die again. */
const MIN_UPTIME_MS = 2000;

/**
 * The primary of `INGRESS_WORKERS` ingress processes (node:cluster; they share the port). It
 * restarts a process that dies, adds up their metrics for `/metrics`, and on SIGTERM or SIGINT
 * passes the signal on, waits for every process to finish its requests, and exits 0.
 */
export function runPrimary(count: number, log: Logger): void {
  const aggregator = new AggregatorRegistry();
  const started = new Map<Worker, number>();
  let stopping = false;
  let failed = false;

  const fork = () => {
    const worker = cluster.fork();
    started.set(worker, Date.now());
    worker.on('message', (message: MetricsRequest) => {
      if (message?.type !== METRICS_REQUEST) return;
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: METRICS_REPLY, id: message.id, text }),
        (error: unknown) =>
          worker.send({ type: METRICS_REPLY, id: message.id, error: String(error) }),
      );
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const upMs = Date.now() - (started.get(worker) ?? 0);
    started.delete(worker);
    if (code !== 0) failed = true;
    if (stopping) return;
    if (upMs < MIN_UPTIME_MS) {
      log.fatal({ pid: worker.process.pid, code, signal }, 'an ingress process died at start');
      stopping = true;
      for (const other of started.keys()) other.process.kill('SIGTERM');
      process.exitCode = 1;
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, 'an ingress process died: restarting it');
    fork();
  });

  for (let i = 0; i < count; i++) fork();
  log.info({ processes: count }, 'ingress cluster started');

  onShutdownSignals(log, async (signal) => {
    stopping = true;
    const exits = [...started.keys()].map(
      (worker) => new Promise<void>((resolve) => worker.once('exit', () => resolve())),
    );
    for (const worker of started.keys()) worker.process.kill(signal as NodeJS.Signals);
    await Promise.all(exits);
    if (failed) throw new PwError(UNCLEAN_SHUTDOWN, 'an ingress process did not stop cleanly');
  });
}

/**
 * In an ingress process of a cluster: reports `registry` to the primary, and returns the
 * function that asks the primary for every process's metrics added up.
 */
export function clusterMetricsClient(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one is what makes prom-client answer the primary's requests in this process.
  new AggregatorRegistry();
  const waiting = new Map<string, { resolve(text: string): void; reject(error: Error): void }>();
  process.on('message', (message: MetricsReply) => {
    if (message?.type !== METRICS_REPLY) return;
    const request = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.text !== undefined) request?.resolve(message.text);
    else {
      request?.reject(
        new PwError(METRICS_UNAVAILABLE, message.error ?? 'no metrics from the primary'),
      );
    }
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = randomUUID();
      waiting.set(id, { resolve, reject });
      process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
    });
}
