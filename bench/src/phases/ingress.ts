// The ingress alone (the worker stopped), one process and then one per core: accepted webhooks per
// second and ack latency. The webhooks they accept stay queued: the worker phase drains them.
import type { BenchRun } from '../bench-run.js';
import type { LoadResult } from '../load.js';
import { measure } from '../measure.js';
import { RssSampler } from '../process-usage.js';
import { startIngress, whileUp } from '../processes.js';
import type { Server } from '../processes.js';
import type { Figures } from '../results.js';

export interface IngressFigures {
  single: Figures['ingress_single'];
  cluster: Figures['ingress_cluster'];
  /** The ingress of one process per core, still running: the next phases drive it. */
  server: Server;
}

export async function ingressPhase(bench: BenchRun): Promise<IngressFigures> {
  const { redisUrl } = bench.options;
  bench.log('ingress, one process (worker stopped)');
  const one = await startIngress(bench, redisUrl, 1);
  const single = await measureIngress(bench, one);
  await one.child.stop();

  bench.log(`ingress, ${bench.cores} processes (worker stopped)`);
  const server = await startIngress(bench, redisUrl, bench.cores);
  const cluster = await measureIngress(bench, server);
  return {
    single: { ...loadFigures(single.load), rss_mb: single.rssMb },
    cluster: {
      processes: bench.cores,
      ...loadFigures(cluster.load),
      rss_mb_total: cluster.rssMb,
      rss_mb_largest_process: cluster.largestProcessRssMb,
    },
    server,
  };
}

/** The ingress driven as fast as it answers, with its peak RSS. */
async function measureIngress(bench: BenchRun, ingress: Server) {
  const sampler = new RssSampler({ ingress: ingress.child.pid });
  const load = await whileUp(measure(bench, ingress.url), ingress.child);
  const rssMb = sampler.stop().ingress ?? 0;
  return { load, rssMb, largestProcessRssMb: sampler.peakProcessMb('ingress') };
}

/** The load generator's figures, as results.json names them. */
export function loadFigures(load: LoadResult) {
  return {
    accepted_per_s: load.acceptedPerSecond,
    p50_ms: load.p50Ms,
    p99_ms: load.p99Ms,
    non_2xx: load.non2xx,
    errors: load.errors,
  };
}
