// The ingress alone (the worker stopped), one process and then one per core: accepted webhooks per
// second and ack latency. The webhooks they accept stay queued: the worker phase drains them.
import { Redis } from 'ioredis';
import type { BenchRun } from '../bench-run.js';
import type { LoadResult } from '../load.js';
import { measure } from '../measure.js';
import { RssSampler } from '../process-usage.js';
import { startIngress, whileUp } from '../processes.js';
import { redisCpuMs } from '../redis-info.js';
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
    single: {
      ...loadFigures(single.load),
      rss_mb: single.rssMb,
      redis_cpu_pct: single.redisCpuPct,
    },
    cluster: {
      processes: bench.cores,
      ...loadFigures(cluster.load),
      rss_mb_total: cluster.rssMb,
      rss_mb_largest_process: cluster.largestProcessRssMb,
      redis_cpu_pct: cluster.redisCpuPct,
    },
    server,
  };
}

/**
 * The ingress driven as fast as it answers, with its peak RSS and the share of one core Redis used
 * meanwhile (warm-up included): the echo it is compared with has no Redis on its cores.
 */
async function measureIngress(bench: BenchRun, ingress: Server) {
  const sampler = new RssSampler({ ingress: ingress.child.pid });
  const redis = new Redis(bench.options.redisUrl);
  try {
    const [cpuBefore, started] = [await redisCpuMs(redis), performance.now()];
    const load = await whileUp(measure(bench, ingress.url), ingress.child);
    const redisCpuPct = Math.round(
      (100 * ((await redisCpuMs(redis)) - cpuBefore)) / (performance.now() - started),
    );
    const rssMb = sampler.stop().ingress ?? 0;
    return { load, rssMb, largestProcessRssMb: sampler.peakProcessMb('ingress'), redisCpuPct };
  } finally {
    redis.disconnect();
  }
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
