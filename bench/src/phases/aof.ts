// What durability costs: raw BullMQ enqueue and one ingress process on three private Redis
// servers with the same flags but `appendonly` (no; yes with appendfsync everysec; yes with
// appendfsync always, which acknowledges nothing a crash can lose).
import type { BenchRun } from '../bench-run.js';
import { measure } from '../measure.js';
import { startIngress, whileUp } from '../processes.js';
import { redisInfo } from '../redis-info.js';
import type { Figures } from '../results.js';
import { rawEnqueueRate } from './raw-bullmq.js';

/** `mainRunAccepted`: one ingress process's accepted/s in the main run, to compare with. */
export async function aofPhase(
  bench: BenchRun,
  mainRunAccepted: number,
): Promise<Figures['aof_everysec']> {
  bench.log('private Redis servers: appendonly no, and yes with appendfsync everysec and always');
  const servers = await Promise.all([
    bench.startPrivateRedis(false),
    bench.startPrivateRedis(true),
    bench.startPrivateRedis(true, undefined, ['--appendfsync', 'always']),
  ]);
  const [plainUrl, aofUrl, alwaysUrl] = servers.map((server) => server.url) as [
    string,
    string,
    string,
  ];
  const { appendfsync } = await redisInfo(aofUrl);
  const { duration } = bench.options;
  // One after the other, never at once: each has the machine to itself.
  const plainEnqueue = await rawEnqueueRate(plainUrl, bench.prefix, duration, bench.signal);
  const aofEnqueue = await rawEnqueueRate(aofUrl, bench.prefix, duration, bench.signal);
  const alwaysEnqueue = await rawEnqueueRate(alwaysUrl, bench.prefix, duration, bench.signal);
  const plainIngress = await ingressAccepted(bench, plainUrl);
  const aofIngress = await ingressAccepted(bench, aofUrl);
  const alwaysIngress = await ingressAccepted(bench, alwaysUrl);
  return {
    appendfsync,
    plain_raw_enqueue_per_s: plainEnqueue,
    aof_raw_enqueue_per_s: aofEnqueue,
    plain_ingress_single_accepted_per_s: plainIngress,
    aof_ingress_single_accepted_per_s: aofIngress,
    raw_enqueue_cost_pct: cost(aofEnqueue, plainEnqueue),
    ingress_cost_pct: cost(aofIngress, plainIngress),
    ingress_cost_vs_main_run_pct: cost(aofIngress, mainRunAccepted),
    always_raw_enqueue_per_s: alwaysEnqueue,
    always_ingress_single_accepted_per_s: alwaysIngress,
    always_raw_enqueue_cost_pct: cost(alwaysEnqueue, plainEnqueue),
    always_ingress_cost_pct: cost(alwaysIngress, plainIngress),
  };
}

/** Accepted webhooks/s of one ingress process on the Redis at `url`. */
async function ingressAccepted(bench: BenchRun, url: string): Promise<number> {
  const ingress = await startIngress(bench, url, 1);
  const load = await whileUp(measure(bench, ingress.url), ingress.child);
  await ingress.child.stop();
  return load.acceptedPerSecond;
}

/** How much slower `durable` is than `plain`, in percent to one decimal. */
function cost(durable: number, plain: number): number {
  return plain > 0 ? Math.round((1 - durable / plain) * 1000) / 10 : 0;
}
