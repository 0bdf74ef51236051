// `npm run bench:redis-cost` (docs/redis-cost.md): what Redis does per action, command by
// command and script by script, on the system's path (the intake, the worker, the recorder) and
// on the raw BullMQ baseline's (`Queue.add`, and a Worker making the same partner-API call), on a
// private redis-server of its own; then the bytes a finished webhook leaves, by kind of key.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { repoRoot } from '@pw/test-utils';
import { BenchRun } from './bench-run.js';
import { buildApps, startSandbox } from './processes.js';
import { benchDatabase } from './record-store.js';
import { redisInfo } from './redis-info.js';
import { median, ratio } from './results.js';
import { inScripts, withoutOwnCalls } from './redis-cost/command-stats.js';
import type { CommandFigure } from './redis-cost/command-stats.js';
import {
  cpuRatio,
  medianCost,
  medianKinds,
  perAction,
  perUnit,
  RAW_PARTS,
  roundCosts,
  sumCosts,
  SYSTEM_PARTS,
} from './redis-cost/figures.js';
import type { Part, PartCost } from './redis-cost/figures.js';
import { RedisMeter } from './redis-cost/meter.js';
import { benchOptionsFor, readRedisCostOptions } from './redis-cost/options.js';
import type { RedisCostOptions } from './redis-cost/options.js';
import { formatResults } from './redis-cost/report.js';
import type { RedisCostResults } from './redis-cost/report.js';
import { measureRound } from './redis-cost/round.js';
import type { RoundMemory } from './redis-cost/round.js';
import { logEveryCommand, ScriptNamer, topLevelCalls } from './redis-cost/script-calls.js';
import type { Stage } from './redis-cost/windows.js';

/** The ports a private redis-server of this bench may take. */
const PORTS = [17200, 17299] as const;

const LUA_FOLDERS = ['packages/shared/src/lua', 'apps/worker/src/lua', 'apps/dashboard/src/lua'];

async function freePortIn([low, high]: readonly [number, number]): Promise<number> {
  for (let port = low; port <= high; port++) {
    const server = createServer().listen(port, '127.0.0.1');
    const free = await once(server, 'listening').then(
      () => true,
      () => false,
    );
    if (free) {
      server.close();
      await once(server, 'close');
      return port;
    }
  }
  throw new Error(`no free port from ${low} to ${high}`);
}

const options = readRedisCostOptions();
const port = await freePortIn(PORTS);
const redisUrl = `redis://127.0.0.1:${port}`;
const bench = new BenchRun(benchOptionsFor(options, redisUrl));
bench.cleanUpOnSignals();

/** The naming pass: one more round, each top-level call logged, each script named. */
async function namingPass(stage: Stage, databaseUrl: string) {
  const namer = new ScriptNamer(LUA_FOLDERS.map((folder) => join(repoRoot, folder)));
  await namer.watch(redisUrl);
  await logEveryCommand(stage.redis);
  const calls: Partial<Record<Part, Map<string, CommandFigure>>> = {};
  try {
    const { cost } = await measureRound(stage, options.webhooks, databaseUrl, async (part) => {
      const logged = await topLevelCalls(stage.redis, namer);
      // The window's own start and end, and the MULTI that read the log (logged before it ran).
      for (const own of ['info', 'config|resetstat', 'slowlog|reset']) logged.delete(own);
      stage.meter.counted('multi');
      calls[part] = withoutOwnCalls(logged, stage.meter.ownCalls);
    });
    const perPart = (part: Part) =>
      perAction({ commands: calls[part]!, cpuMs: 0, units: 0 }, cost.actions).commands;
    const nested = Object.fromEntries(
      [...SYSTEM_PARTS, ...RAW_PARTS].map((part) => [
        part,
        Object.fromEntries(
          [...inScripts(cost.windows[part].commands, topLevelCounts(calls[part]!))].map(
            ([command, n]) => [command, Math.round((n / Math.max(1, cost.actions)) * 100) / 100],
          ),
        ),
      ]),
    );
    return {
      topLevel: Object.fromEntries(
        [...SYSTEM_PARTS, ...RAW_PARTS].map((part) => [part, perPart(part)]),
      ) as Record<Part, PartCost['commands']>,
      nested: nested as RedisCostResults['calls_in_scripts'],
    };
  } finally {
    namer.stop();
    await stage.redis.config('SET', 'slowlog-log-slower-than', '10000');
  }
}

/** Top-level calls by plain command name (`evalsha`, all scripts together). */
function topLevelCounts(calls: ReadonlyMap<string, CommandFigure>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [name, { calls: n }] of calls) {
    const command = name.split(' ')[0]!;
    counts.set(command, (counts.get(command) ?? 0) + n);
  }
  return counts;
}

function rangeOf(values: readonly number[]): [number, number] {
  return [Math.min(...values), Math.max(...values)];
}

/** The rounds' figures put together. */
function summarize(
  rounds: { costs: Record<Part, PartCost>; memory: RoundMemory; actions: number }[],
): Omit<RedisCostResults, 'machine' | 'top_level_calls' | 'calls_in_scripts'> {
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
  await bench.startPrivateRedis(false, port);
  const redis = new Redis(redisUrl);
  const meter = new RedisMeter(redis, () => redis.call('SLOWLOG', 'RESET'));
  bench.log(`private redis-server on port ${port}; keys under ${bench.prefix}:`);
  const sandbox = await startSandbox(bench);
  const database = await benchDatabase(bench);
  const stage: Stage = { bench, sandbox, meter, redis, recordTtlSeconds: o.recordTtlSeconds };
  try {
    const rounds = [];
    for (let i = 1; i <= o.rounds; i++) {
      bench.log(`round ${i} of ${o.rounds}`);
      const { cost, memory } = await measureRound(stage, o.webhooks, database.url);
      rounds.push({ costs: roundCosts(cost), memory, actions: cost.actions });
    }
    bench.log('naming pass: every top-level call logged, scripts named');
    const named = await namingPass(stage, database.url);
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
      calls_in_scripts: named.nested,
    };
  } finally {
    redis.disconnect();
    await database.close();
  }
}

await bench.runToEnd(async () => {
  const results = await run(options);
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(formatResults(results));
  bench.log(`wrote ${options.out}`);
});
