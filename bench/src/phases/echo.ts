// Baseline: a bare Express JSON echo on this machine, driven as the ingress is.
import type { BenchRun } from '../bench-run.js';
import { measure } from '../measure.js';
import { RssSampler } from '../process-usage.js';
import { startEcho, whileUp } from '../processes.js';
import type { Figures } from '../results.js';

export async function echoPhase(bench: BenchRun): Promise<Figures['echo']> {
  bench.log('baseline: bare Express JSON echo');
  const echo = await startEcho(bench);
  const sampler = new RssSampler({ echo: echo.child.pid });
  const load = await whileUp(measure(bench, echo.url, { repeat: true }), echo.child);
  const rss = sampler.stop();
  await echo.child.stop();
  return {
    accepted_per_s: load.acceptedPerSecond,
    p50_ms: load.p50Ms,
    p99_ms: load.p99Ms,
    rss_mb: rss.echo ?? 0,
  };
}
