// `npm run bench`: the benchmark of the contract's section 9. One run measures the baselines (a
// bare Express JSON echo, raw BullMQ enqueue and no-op worker) and the real ingress and worker
// processes on the same machine, prints a table and writes bench/results.json. Each phase is a
// module of phases/; this one runs them in order and puts their figures together.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { repoRoot } from '@pw/test-utils';
import { BenchRun } from './bench-run.js';
import { benchNotes } from './notes.js';
import { readOptions } from './options.js';
import { aofPhase } from './phases/aof.js';
import { echoPhase } from './phases/echo.js';
import { floodPhase, floodSettings } from './phases/flood.js';
import type { FloodCpuMs } from './phases/flood.js';
import { ingressPhase } from './phases/ingress.js';
import type { IngressFigures } from './phases/ingress.js';
import { latencyPhase } from './phases/latency.js';
import { rawBullmqPhase } from './phases/raw-bullmq.js';
import { sustainedPhase } from './phases/sustained.js';
import type { SustainedFigures } from './phases/sustained.js';
import { workerDrainPhase } from './phases/worker-drain.js';
import type { DrainFigures } from './phases/worker-drain.js';
import { sandboxStats, startSandbox } from './processes.js';
import { printTable } from './report.js';
import { redisInfo } from './redis-info.js';
import { ratio } from './results.js';
import type { Figures, Machine, Ratios, Results } from './results.js';
import { evaluateTargets } from './targets.js';

const TOKEN_LIFETIME_SECONDS = 300; // the sandbox identity provider's default

const options = readOptions();
const bench = new BenchRun(options);
bench.cleanUpOnSignals();

/** Builds the apps, then runs the phases in order; each stops what it starts unless it says not. */
async function runPhases(): Promise<Results> {
  bench.log('building the apps (npm run build)');
  execFileSync('npm', ['run', '-s', 'build'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.chdir(repoRoot);
  const startedAt = new Date();
  const redis = await redisInfo(options.redisUrl);
  const host = new URL(options.redisUrl).host;
  bench.log(`Redis ${redis.version} at ${host}, keys under ${bench.prefix}:`);
  bench.pool.fill(1000);
  const bodyBytes = bench.pool.meanBodyBytes();

  const echo = await echoPhase(bench);
  const rawBullmq = await rawBullmqPhase(bench);
  bench.log('sandbox: identity provider and partner API (its own process)');
  const sandbox = await startSandbox(bench);
  const ingress = await ingressPhase(bench);
  const drain = await workerDrainPhase(bench, sandbox);
  const sustained = await sustainedPhase(bench, ingress.server, sandbox);
  const paced = await latencyPhase(bench, ingress.server, sandbox);
  await ingress.server.child.stop();
  await bench.clearKeys();
  const flood = floodSettings(options);
  const flooding = await floodPhase(bench, flood);
  const aof = await aofPhase(bench, ingress.single.accepted_per_s);
  const tokens = await sandboxStats(sandbox);

  const figures: Figures = {
    echo,
    raw_bullmq: rawBullmq,
    ingress_single: ingress.single,
    ingress_cluster: ingress.cluster,
    worker: drain.worker,
    sustained_2000: sustained.sustained,
    paced_1000: paced,
    rss_peak_mb: rssPeaks(ingress, drain, sustained),
    tokens: {
      requests: tokens.tokenRequests,
      partner_api_calls: tokens.apiCalls,
      worker_processes_started: bench.workerStarts,
      token_lifetime_s: TOKEN_LIFETIME_SECONDS,
      run_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
    },
    aof_everysec: aof,
    flood_unsigned: flooding.figures,
  };
  const ratios = ratiosOf(figures, flooding.cpuMs);
  return {
    machine: machineOf(startedAt, redis.version, bodyBytes),
    figures,
    ratios,
    targets: evaluateTargets({ figures, ratios }),
    notes: benchNotes(flood, flooding.figures),
  };
}

/** The peak RSS of each process over the phases that ran it. */
function rssPeaks(
  { single, cluster }: IngressFigures,
  drain: DrainFigures,
  { rss }: SustainedFigures,
): Figures['rss_peak_mb'] {
  return {
    ingress_per_process: Math.max(
      single.rss_mb,
      cluster.rss_mb_largest_process,
      rss.ingressLargestProcess,
    ),
    ingress_cluster_total: Math.max(cluster.rss_mb_total, rss.ingressTotal),
    worker: Math.max(drain.worker.rss_mb, rss.worker),
    sandbox: Math.max(drain.sandboxRssMb, rss.sandbox),
  };
}

function ratiosOf(f: Figures, cpuMs: FloodCpuMs): Ratios {
  return {
    ingress_single_vs_echo: ratio(f.ingress_single.accepted_per_s, f.echo.accepted_per_s),
    ingress_cluster_vs_echo: ratio(f.ingress_cluster.accepted_per_s, f.echo.accepted_per_s),
    ack_p99_vs_echo_p99: ratio(f.ingress_cluster.p99_ms, f.echo.p99_ms),
    ack_p99_single_vs_echo_p99: ratio(f.ingress_single.p99_ms, f.echo.p99_ms),
    actions_vs_raw_noop_worker: ratio(f.worker.actions_per_s, f.raw_bullmq.noop_worker_jobs_per_s),
    actions_recording_vs_not: ratio(f.worker.actions_per_s_recording, f.worker.actions_per_s),
    aof_cost_pct: f.aof_everysec.ingress_cost_pct,
    flood_legit_p99_vs_unloaded: f.flood_unsigned.p99_ratio,
    // From the unrounded CPU times: the figures have one decimal only.
    flood_many_keys_cpu_vs_legit: ratio(cpuMs.manyKeys, cpuMs.legit),
    flood_long_keys_cpu_vs_legit: ratio(cpuMs.longKeys, cpuMs.legit),
  };
}

function machineOf(startedAt: Date, redisVersion: string, bodyBytes: number): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: bench.cores,
    node: process.version,
    redis: redisVersion,
    date: startedAt.toISOString(),
    duration_s: options.duration,
    connections: options.connections,
    concurrency: options.concurrency,
    quick: options.quick,
    event_body_bytes_mean: bodyBytes,
  };
}

try {
  const results = await runPhases();
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  printTable(results);
  bench.log(`wrote ${options.out}`);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await bench.cleanup();
}
// A phase cut short by a failure may leave a load generator or a timer behind: do not wait for it.
process.exit();
