// 2,000 webhooks/s offered to the ingress (one process per core) while the worker drains them:
// what it accepts, its ack latency, and the peak RSS of everything running.
import type { BenchRun } from '../bench-run.js';
import { measure } from '../measure.js';
import { RssSampler } from '../process-usage.js';
import { startWorker, whileUp } from '../processes.js';
import type { Sandbox, Server } from '../processes.js';
import type { Figures } from '../results.js';
import { loadFigures } from './ingress.js';

const OFFERED_PER_SECOND = 2000;

export interface SustainedFigures {
  sustained: Figures['sustained_2000'];
  /** Peak RSS in MB during the phase. */
  rss: { ingressTotal: number; ingressLargestProcess: number; worker: number; sandbox: number };
}

export async function sustainedPhase(
  bench: BenchRun,
  ingress: Server,
  sandbox: Sandbox,
): Promise<SustainedFigures> {
  bench.log('2,000 webhooks/s offered while the worker drains');
  const worker = await startWorker(bench, sandbox);
  const sampler = new RssSampler({
    ingress: ingress.child.pid,
    worker: worker.pid,
    sandbox: sandbox.child.pid,
  });
  const load = await whileUp(
    measure(bench, ingress.url, { rate: OFFERED_PER_SECOND, warmup: false }),
    ingress.child,
    worker,
    sandbox.child,
  );
  const rss = sampler.stop();
  const ingressLargestProcess = sampler.peakProcessMb('ingress');
  await worker.stop();
  await bench.clearKeys();
  return {
    sustained: { offered_per_s: OFFERED_PER_SECOND, ...loadFigures(load) },
    rss: {
      ingressTotal: rss.ingress ?? 0,
      ingressLargestProcess,
      worker: rss.worker ?? 0,
      sandbox: rss.sandbox ?? 0,
    },
  };
}
