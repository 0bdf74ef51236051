// `npm run bench:redis-cost` (docs/redis-cost.md): what Redis does per action, command by
// command and script by script, on the system's path (the intake, the worker, the recorder) and
// on the raw BullMQ baseline's (`Queue.add`, and a Worker making the same partner-API call), on a
// private redis-server of its own; then the bytes a finished webhook leaves, by kind of key.
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot } from '@pw/test-utils';
import { BenchRun } from './bench-run.js';
import { buildApps, startSandbox } from './processes.js';
import { redisInfo } from './redis-info.js';
import { median, ratio } from './results.js';
import { withoutOwnCalls } from './redis-cost/command-stats.js';
import type { CommandFigure } from './redis-cost/command-stats.js';
import {
  cpuRatio,
  medianCost,
  medianKinds,
  perAction,
  perUnit,
  RAW_PARTS,
  sumCosts,
  SYSTEM_PARTS,
} from './redis-cost/figures.js';
import type { Part, PartCost } from './redis-cost/figures.js';
import { benchOptionsFor, readRedisCostOptions } from './redis-cost/options.js';
import type { RedisCostOptions } from './redis-cost/options.js';
import { formatResults } from './redis-cost/report.js';
import type { RedisCostResults } from './redis-cost/report.js';
import { measureRound } from './redis-cost/round.js';
import { loggedCalls, logEveryCommand, ScriptNamer } from './redis-cost/script-calls.js';
import type { LoggedCalls } from './redis-cost/script-calls.js';
import { measureRounds, privateStage } from './redis-cost/stage.js';
import type { MeasuredRound } from './redis-cost/stage.js';
import type { Stage } from './redis-cost/windows.js';

const LUA_FOLDERS = ['packages/shared/src/lua', 'apps/worker/src/lua', 'apps/dashboard/src/lua'];

const options = readRedisCostOptions();
const port = await freePort();
const redisUrl = `redis://127.0.0.1:${port}`;
const bench = new BenchRun(benchOptionsFor(options, redisUrl));
bench.cleanUpOnSignals();

/** Webhooks of the pass that names the scripts: enough for every process to run each of its own. */
const NAMING_WEBHOOKS = 100;

/** A round watched by MONITOR: each script's text, as each new connection sends it, names it. */
async function nameScripts(stage: Stage, databaseUrl: string): Promise<ScriptNamer> {
  const namer = new ScriptNamer(LUA_FOLDERS.map((folder) => join(repoRoot, folder)));
  await namer.watch(redisUrl);
  try {
    await measureRound(stage, NAMING_WEBHOOKS, databaseUrl);
  } finally {
    await namer.stop();
  }
  return namer;
}

type Calls = Record<Part, PartCost['commands']>;

/** A round with every call logged: each part's calls per action, and its scripts' own. */
async function slowlogPass(stage: Stage, databaseUrl: string, namer: ScriptNamer) {
  await logEveryCommand(stage.redis);
  const logged: Partial<Record<Part, LoggedCalls>> = {};
  try {
    const { cost } = await measureRound(stage, options.webhooks, databaseUrl, async (part) => {
      const calls = await loggedCalls(stage.redis, namer);
      // The window's own start and end, and the MULTI that read the log (logged before it ran).
      for (const own of ['info', 'config|resetstat', 'slowlog|reset']) calls.topLevel.delete(own);
      stage.meter.counted('multi');
      logged[part] = {
        topLevel: withoutOwnCalls(calls.topLevel, stage.meter.ownCalls),
        inScripts: calls.inScripts,
      };
    });
    const per = (calls: Map<string, CommandFigure>) =>
      perAction({ commands: calls, cpuMs: 0, reads: 0, units: 0 }, cost.actions).commands;
    const parts = [...SYSTEM_PARTS, ...RAW_PARTS];
    return {
      topLevel: Object.fromEntries(parts.map((p) => [p, per(logged[p]!.topLevel)])) as Calls,
      inScripts: Object.fromEntries(parts.map((p) => [p, per(logged[p]!.inScripts)])) as Calls,
    };
  } finally {
    await stage.redis.config('SET', 'slowlog-log-slower-than', '10000');
  }
}

function rangeOf(values: readonly number[]): [number, number] {
  return [Math.min(...values), Math.max(...values)];
}

/** The rounds' figures put together. */
function summarize(
  rounds: MeasuredRound[],
): Omit<RedisCostResults, 'machine' | 'top_level_calls' | 'script_commands'> {
  const parts = Object.fromEntries(
    [...SYSTEM_PARTS, ...RAW_PARTS].map((part) => [
      part,
      medianCost(rounds.map((one) => one.costs[part])),
    ]),
  ) as Record<Part, PartCost>;
  const system = (one: (typeof rounds)[number]) => sumCosts(SYSTEM_PARTS.map((p) => one.costs[p]));
  const raw = (one: (typeof rounds)[number]) => sumCosts(RAW_PARTS.map((p) => one.costs[p]));
  const ranges = Object.fromEntries([
    ...[...SYSTEM_PARTS, ...RAW_PARTS].map((p) => [
      p,
      rangeOf(rounds.map((one) => one.costs[p].cpu_us)),
    ]),
    ['system', rangeOf(rounds.map((one) => system(one).cpu_us))],
    ['raw', rangeOf(rounds.map((one) => raw(one).cpu_us))],
  ]) as RedisCostResults['cpu_us_ranges'];
  const memory = medianKinds(rounds.map((one) => perUnit(one.memory.kinds, one.memory.webhooks)));
  const beforeSweep = medianKinds(
    rounds.map((one) => perUnit(one.memory.kindsBeforeSweep, options.webhooks)),
  );
  const perWebhook = (bytes: number, one: (typeof rounds)[number]) =>
    Math.round(bytes / one.memory.webhooks);
  return {
    webhooks_per_round: options.webhooks,
    actions_per_webhook: median(rounds.map((one) => ratio(one.actions, options.webhooks))),
    rounds: rounds.length,
    record_ttl_seconds: options.recordTtlSeconds,
    parts,
    system: medianCost(rounds.map(system)),
    raw: medianCost(rounds.map(raw)),
    redis_cpu_per_action_vs_raw: median(rounds.map((one) => cpuRatio(one.costs))),
    cpu_us_ranges: ranges,
    memory_per_webhook: memory,
    memory_per_webhook_before_sweep: beforeSweep,
    intake_rate: options.intakeRate,
    memory_bytes_per_webhook: Object.values(memory).reduce((sum, kind) => sum + kind.bytes, 0),
    stream_bytes_per_webhook: {
      drained: median(rounds.map((one) => perWebhook(one.memory.streamBytes.drained, one))),
      recorded: median(rounds.map((one) => perWebhook(one.memory.streamBytes.recorded, one))),
    },
    raw_memory_per_job: medianKinds(rounds.map((one) => perUnit(one.memory.rawKinds, one.actions))),
  };
}

async function run(o: RedisCostOptions): Promise<RedisCostResults> {
  buildApps(bench);
  const sandbox = await startSandbox(bench);
  const onStage = await privateStage(bench, port, sandbox, o.recordTtlSeconds);
  const { stage, databaseUrl } = onStage;
  try {
    const rounds = await measureRounds(onStage, o.webhooks, o.rounds);
    bench.log('naming pass: MONITOR sees each script loaded');
    const namer = await nameScripts(stage, databaseUrl);
    bench.log('slowlog pass: every call logged, by script');
    const named = await slowlogPass(stage, databaseUrl, namer);
    const server = await redisInfo(redisUrl);
    const machine = {
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      cores: bench.cores,
      node: process.version,
      redis: server.version,
      date: new Date().toISOString(),
    };
    return {
      machine,
      ...summarize(rounds),
      top_level_calls: named.topLevel,
      script_commands: named.inScripts,
    };
  } finally {
    await onStage.close();
  }
}

await bench.runToEnd(async () => {
  const results = await run(options);
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(formatResults(results));
  bench.log(`wrote ${options.out}`);
});
