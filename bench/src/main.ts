// `npm run bench` (docs/performance.md). One run measures the baselines (a
// bare Express JSON echo, raw BullMQ enqueue and no-op worker) and the real ingress and worker
// processes on the same machine, prints a table and writes bench/results.json. Each phase is a
// module of phases/; this one runs them in order and puts their figures together.
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { BenchRun } from './bench-run.js';
import { benchNotes } from './notes.js';
import { readOptions } from './options.js';
import { aofPhase } from './phases/aof.js';
import { clusterPhase } from './phases/cluster.js';
import { echoPhase } from './phases/echo.js';
import { floodPhase, floodSettings } from './phases/flood.js';
import type { FloodCpuMs } from './phases/flood.js';
import { ingressPhase } from './phases/ingress.js';
import { latencyPhase } from './phases/latency.js';
import { rawBullmqPhase } from './phases/raw-bullmq.js';
import { rawHttpWorkerPhase } from './phases/raw-http.js';
import { redisCostPhase } from './phases/redis-cost.js';
import { sustainedPhase } from './phases/sustained.js';
import type { SustainedFigures } from './phases/sustained.js';
import { tracingPhase } from './phases/tracing.js';
import { workerDrainPhase } from './phases/worker-drain.js';
import { buildApps, sandboxStats, startIngress, startSandbox } from './processes.js';
import type { Sandbox, Server } from './processes.js';
import { printClusterTable, printTable } from './report.js';
import { redisInfo } from './redis-info.js';
import type { SandboxStats } from './sandbox-process.js';
import {
  median,
  medianOf,
  ratio,
  REDIS_RATIOS,
  ROUND_RATIOS,
  TRACING_RATIOS,
  twoWorkersCeiling,
} from './results.js';
import type {
  Figures,
  Machine,
  Ratios,
  RedisRatio,
  Results,
  RoundFigures,
  RoundRatio,
  TracingRatio,
} from './results.js';
import { evaluateTargets } from './targets.js';

const TOKEN_LIFETIME_SECONDS = 300; // the sandbox identity provider's default

const options = readOptions();
const bench = new BenchRun(options);
bench.cleanUpOnSignals();

/** The phases whose figures are compared, once: baselines and system side by side. */
async function round(sandbox: Sandbox): Promise<RoundFigures> {
  const echo = await echoPhase(bench);
  const rawBullmq = await rawBullmqPhase(bench);
  const ingress = await ingressPhase(bench);
  await ingress.server.child.stop();
  // The ingress runs queued the backlog: the same webhooks for the baseline and for the worker.
  const rawHttp = await rawHttpWorkerPhase(bench, sandbox);
  const drain = await workerDrainPhase(bench, sandbox);
  rssPeaks.push(drain.sandboxRssMb);
  return {
    echo,
    raw_bullmq: rawBullmq,
    raw_http_worker: rawHttp,
    ingress_single: ingress.single,
    ingress_cluster: ingress.cluster,
    worker: drain.worker,
  };
}

const rssPeaks: number[] = [];

/**
 * A backlog's mark: a first action that starts this long after its webhook waited in a queue. It
 * is asked of the 99th percentile: at a rate the worker sustains only now and then, a backlog
 * forms and drains again, which the median does not show (in one run, p50 12 ms and p99 1,087 ms
 * at 349/s, where 150/s gave p50 2 ms and p99 29 ms).
 */
const BACKLOG_MS = 100;

/**
 * The latency phase at `--rate`, or at a rate the worker sustains here, found by the bench: half
 * the rate it drained alone (in webhooks), halved again, twice at most, while the webhooks wait
 * in a backlog (the ingress and the load generator share the cores with it in this phase).
 */
async function sustainedLatency(
  ingress: Server,
  sandbox: Sandbox,
  middle: RoundFigures,
): Promise<Figures['paced']> {
  const perWebhook = middle.raw_http_worker.actions_per_webhook || 1;
  let rate = options.rate ?? Math.max(1, Math.round(middle.worker.actions_per_s / 2 / perWebhook));
  let paced = await latencyPhase(bench, ingress, sandbox, rate);
  let halvings = 0;
  while (options.rate === undefined && halvings < 2 && paced.enqueue_to_start_p99_ms > BACKLOG_MS) {
    bench.log(`${rate}/s was not sustained (p99 ${paced.enqueue_to_start_p99_ms} ms): halving it`);
    await bench.clearKeys();
    rate = Math.max(1, Math.round(rate / 2));
    halvings++;
    paced = await latencyPhase(bench, ingress, sandbox, rate);
  }
  return { ...paced, halvings };
}

/** The ratios of one round. */
function roundRatios(f: RoundFigures): Pick<Ratios, RoundRatio> {
  return {
    ingress_single_vs_echo: ratio(f.ingress_single.accepted_per_s, f.echo.accepted_per_s),
    ingress_cluster_vs_echo: ratio(f.ingress_cluster.accepted_per_s, f.echo.accepted_per_s),
    ack_p99_vs_echo_p99: ratio(f.ingress_cluster.p99_ms, f.echo.p99_ms),
    ack_p99_single_vs_echo_p99: ratio(f.ingress_single.p99_ms, f.echo.p99_ms),
    actions_vs_raw_noop_worker: ratio(f.worker.actions_per_s, f.raw_bullmq.noop_worker_jobs_per_s),
    actions_vs_raw_http_worker: ratio(f.worker.actions_per_s, f.raw_http_worker.jobs_per_s),
    two_workers_vs_one: ratio(f.worker.actions_per_s_two_processes, f.worker.actions_per_s),
    two_workers_ceiling: twoWorkersCeiling(f.worker, bench.cores),
    actions_recording_vs_not: ratio(f.worker.actions_per_s_recording, f.worker.actions_per_s),
  };
}

/** The compared phases, in `--rounds` rounds, each with its ratios. */
async function comparedRounds(sandbox: Sandbox): Promise<Results['rounds']> {
  const rounds: Results['rounds'] = [];
  for (let i = 1; i <= options.rounds; i++) {
    bench.log(`round ${i} of ${options.rounds}`);
    const figures = await round(sandbox);
    rounds.push({ figures, ratios: roundRatios(figures) });
  }
  return rounds;
}

/** Tracing's cost, in rounds of its own: each compares its four modes, one after the other. */
async function tracingRounds(sandbox: Sandbox): Promise<Results['tracing_rounds']> {
  const rounds: Results['tracing_rounds'] = [];
  for (let i = 1; i <= options.rounds; i++) {
    bench.log(`tracing, round ${i} of ${options.rounds}`);
    const figures = await tracingPhase(bench, sandbox);
    await bench.clearKeys();
    rounds.push({ figures, ratios: tracingRatios(figures) });
  }
  return rounds;
}

/** The largest RSS of each process, over the rounds and the sustained phase. */
function rssPeakMb(
  rounds: Results['rounds'],
  sustained: SustainedFigures['rss'],
): Figures['rss_peak_mb'] {
  return {
    ingress_per_process: Math.max(
      ...rounds.map(({ figures: f }) =>
        Math.max(f.ingress_single.rss_mb, f.ingress_cluster.rss_mb_largest_process),
      ),
      sustained.ingressLargestProcess,
    ),
    ingress_cluster_total: Math.max(
      ...rounds.map(({ figures: f }) => f.ingress_cluster.rss_mb_total),
      sustained.ingressTotal,
    ),
    worker: Math.max(...rounds.map(({ figures: f }) => f.worker.rss_mb), sustained.worker),
    sandbox: Math.max(...rssPeaks, sustained.sandbox),
  };
}

/** Tokens asked for and partner calls made over the run, which started at `startedAt`. */
function tokenFigures(stats: SandboxStats, startedAt: Date): Figures['tokens'] {
  return {
    requests: stats.tokenRequests - bench.ownTokenRequests,
    partner_api_calls: stats.apiCalls,
    worker_processes_started: bench.workerStarts,
    token_lifetime_s: TOKEN_LIFETIME_SECONDS,
    run_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
  };
}

/** Each ratio of the rounds and of tracing's rounds: its median, and its lowest and highest. */
function ratiosOverRounds(
  rounds: Results['rounds'],
  tracing: Results['tracing_rounds'],
  redis: Results['redis_rounds'],
): { medians: Pick<Ratios, RoundRatio | TracingRatio | RedisRatio>; ranges: Results['ranges'] } {
  const rangeOf = (values: number[]): [number, number] => [
    Math.min(...values),
    Math.max(...values),
  ];
  const over = <T>(summary: (values: number[]) => T) => ({
    ...Object.fromEntries(
      ROUND_RATIOS.map((name) => [name, summary(rounds.map((one) => one.ratios[name]))]),
    ),
    ...Object.fromEntries(
      TRACING_RATIOS.map((name) => [name, summary(tracing.map((one) => one.ratios[name]))]),
    ),
    ...Object.fromEntries(
      REDIS_RATIOS.map((name) => [name, summary(redis.map((one) => one[name]))]),
    ),
  });
  return {
    medians: over(median) as Pick<Ratios, RoundRatio | TracingRatio | RedisRatio>,
    ranges: over(rangeOf) as Results['ranges'],
  };
}

/**
 * Builds the apps, runs the compared phases in rounds, then the others once; each phase stops
 * what it starts unless it says not.
 */
async function runPhases(): Promise<Results> {
  buildApps(bench);
  const startedAt = new Date();
  const redis = await redisInfo(options.redisUrl);
  const host = new URL(options.redisUrl).host;
  bench.log(`Redis ${redis.version} at ${host}, keys under ${bench.prefix}:`);
  bench.pool.fill(1000);
  const bodyBytes = bench.pool.meanBodyBytes();

  bench.log('sandbox: identity provider and partner API (its own process)');
  const sandbox = await startSandbox(bench);
  const rounds = await comparedRounds(sandbox);
  const middle = medianOf(rounds.map((one) => one.figures));
  const tracing = await tracingRounds(sandbox);
  const redisRounds = await redisCostPhase(bench, sandbox);
  const ingress = await startIngress(bench, options.redisUrl, bench.cores);
  const sustained = await sustainedPhase(bench, ingress, sandbox);
  const paced = await sustainedLatency(ingress, sandbox, middle);
  await ingress.child.stop();
  await bench.clearKeys();
  const flood = floodSettings(options);
  const flooding = await floodPhase(bench, flood);
  const aof = await aofPhase(bench, middle.ingress_single.accepted_per_s);
  const stats = await sandboxStats(sandbox);

  const figures: Figures = {
    ...middle,
    sustained_2000: sustained.sustained,
    paced,
    rss_peak_mb: rssPeakMb(rounds, sustained.rss),
    tokens: tokenFigures(stats, startedAt),
    aof_everysec: aof,
    flood_unsigned: flooding.figures,
    tracing: medianOf(tracing.map((one) => one.figures)),
    redis: redisFigures(redisRounds),
  };
  const { medians, ranges } = ratiosOverRounds(rounds, tracing, redisRounds);
  const ratios: Ratios = { ...medians, ...onceRatios(figures, flooding.cpuMs) };
  return {
    machine: machineOf(startedAt, redis.version, bodyBytes),
    figures,
    ratios,
    ranges,
    rounds,
    tracing_rounds: tracing,
    redis_rounds: redisRounds,
    targets: evaluateTargets({ figures, ratios }),
    notes: benchNotes(flood, flooding.figures),
  };
}

/** The Redis figures' medians over the rounds, but the ratio (in `Ratios`). */
function redisFigures(rounds: Results['redis_rounds']): Figures['redis'] {
  const { redis_cpu_per_action_vs_raw: _ratio, ...figures } = medianOf(rounds);
  return figures;
}

/** The ratios of one round of the tracing phase. */
function tracingRatios(t: Figures['tracing']): Pick<Ratios, TracingRatio> {
  return {
    ingress_tracing_off_vs_plain: ratio(t.ingress_off_per_s, t.ingress_plain_per_s),
    ingress_tracing_full_vs_off: ratio(t.ingress_full_per_s, t.ingress_off_per_s),
    ingress_tracing_tenth_vs_off: ratio(t.ingress_tenth_per_s, t.ingress_off_per_s),
    worker_tracing_off_vs_plain: ratio(t.worker_off_per_s, t.worker_plain_per_s),
    worker_tracing_full_vs_off: ratio(t.worker_full_per_s, t.worker_off_per_s),
    worker_tracing_tenth_vs_off: ratio(t.worker_tenth_per_s, t.worker_off_per_s),
  };
}

/** The ratios of the phases run once. */
function onceRatios(
  f: Figures,
  cpuMs: FloodCpuMs,
): Omit<Ratios, RoundRatio | TracingRatio | RedisRatio> {
  return {
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
    rounds: options.rounds,
    event_body_bytes_mean: bodyBytes,
  };
}

/** `--cluster K`: the cluster phase alone, on a K-master cluster of the run's own. */
async function runClusterPhase(masters: number): Promise<void> {
  buildApps(bench);
  const sandbox = await startSandbox(bench);
  const figures = await clusterPhase(bench, sandbox, masters);
  writeFileSync(options.out, `${JSON.stringify(figures, null, 2)}\n`);
  printClusterTable(figures);
  bench.log(`wrote ${options.out}`);
}

await bench.runToEnd(async () => {
  if (options.cluster !== undefined) return runClusterPhase(options.cluster);
  const results = await runPhases();
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  printTable(results);
  bench.log(`wrote ${options.out}`);
});
