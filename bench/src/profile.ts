// `npm run bench:profile`: where the ingress and the worker spend their CPU. It queues webhooks
// through one ingress process run with `node --cpu-prof`, then lets a worker, also profiled, drain
// them, and prints each profile's self time by package and by function. The profiles stay in
// bench/profiles/ to open in Chrome's DevTools (Performance, "Load profile").
import { Redis } from 'ioredis';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared/queue';
import { repoRoot } from '@pw/test-utils';
import { BenchRun } from './bench-run.js';
import { formatSummary, partCosts, readProfile, summarize } from './cpu-profile.js';
import { measure } from './measure.js';
import { readOptions } from './options.js';
import { rawHttpWorkerPhase } from './phases/raw-http.js';
import { drainRate } from './phases/worker-drain.js';
import { redisCpuMs } from './redis-info.js';
import { buildApps, startIngress, startSandbox, startWorker, whileUp } from './processes.js';

const options = readOptions();
const bench = new BenchRun(options);
bench.cleanUpOnSignals();
const dir = join(repoRoot, 'bench', 'profiles');

/** `node --cpu-prof` writing into `dir/<name>`, emptied first. */
function profiling(name: string): string[] {
  const into = join(dir, name);
  rmSync(into, { recursive: true, force: true });
  mkdirSync(into, { recursive: true });
  return ['--cpu-prof', '--cpu-prof-dir', into];
}

/** The profiles written into `dir/<name>` (one per process). */
const profilesOf = (name: string): string[] =>
  readdirSync(join(dir, name))
    .filter((file) => file.endsWith('.cpuprofile'))
    .map((file) => join(name, file));

function report(name: string, title: string): void {
  for (const file of profilesOf(name)) {
    console.log(
      `${formatSummary(`${title} (${file})`, summarize(readProfile(join(dir, file))))}\n`,
    );
  }
}

/** Our worker's self time per action by part next to the raw HTTP worker's per job. */
function compareWorkers(rawJobs: number, actions: number): void {
  const [rawFile] = profilesOf('raw-http-worker');
  const [ourFile] = profilesOf('worker');
  if (!rawFile || !ourFile) return;
  const rows = partCosts(
    { summary: summarize(readProfile(join(dir, rawFile)), Infinity), units: rawJobs },
    { summary: summarize(readProfile(join(dir, ourFile)), Infinity), units: actions },
  );
  console.log(
    "CPU per action by part, µs: our worker's per action, the raw HTTP worker's per job (self time over each process's life, start-up included)",
  );
  console.log(
    `  ${'part'.padEnd(22)} ${'raw'.padStart(6)} ${'ours'.padStart(6)} ${'extra'.padStart(6)}`,
  );
  for (const row of rows.filter((r) => r.name === 'busy' || Math.abs(r.oursUs - r.baseUs) >= 2)) {
    console.log(
      `  ${row.name.padEnd(22)} ${String(row.baseUs).padStart(6)} ${String(row.oursUs).padStart(6)} ${String(row.oursUs - row.baseUs).padStart(6)}`,
    );
  }
  console.log('');
}

interface CommandStats {
  /** Calls and microseconds of each command so far, as `INFO commandstats` counts them. */
  commands: Map<string, { calls: number; usec: number }>;
  /** Redis's own CPU time so far (user and system, all its threads), in ms. */
  cpuMs: number;
}

async function commandStats(redis: Redis): Promise<CommandStats> {
  const [info, cpuMs] = await Promise.all([redis.info('commandstats'), redisCpuMs(redis)]);
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    commands.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return { commands, cpuMs };
}

/** The calls made between two readings, largest first; the INFO calls themselves left out. */
function diffCalls(after: CommandStats, before: CommandStats): [string, number, number][] {
  return [...after.commands]
    .map(([command, { calls, usec }]): [string, number, number] => {
      const earlier = before.commands.get(command);
      return [command, calls - (earlier?.calls ?? 0), usec - (earlier?.usec ?? 0)];
    })
    .filter(([command, count]) => count > 0 && command !== 'info')
    .sort((a, b) => b[1] - a[1]);
}

async function completedActions(redisUrl: string, prefix: string): Promise<number> {
  const actions = new Queue(QUEUE_NAMES.actions, {
    connection: { url: redisUrl },
    prefix,
    streams: QUEUE_STREAMS,
  });
  try {
    return (await actions.getJobCounts('completed')).completed ?? 0;
  } finally {
    await actions.close();
  }
}

await bench.runToEnd(async () => {
  buildApps(bench);
  const sandbox = await startSandbox(bench);
  bench.log(`ingress, one process, profiled, driven for ${options.duration} s (no worker)`);
  const ingress = await startIngress(bench, options.redisUrl, 1, {}, profiling('ingress'));
  const load = await whileUp(measure(bench, ingress.url), ingress.child);
  await ingress.child.stop();
  bench.log(`ingress accepted ${load.acceptedPerSecond}/s`);
  // The worker's fair baseline on copies of the same action jobs, profiled the same way.
  const raw = await rawHttpWorkerPhase(bench, sandbox, profiling('raw-http-worker'));
  bench.log(
    `raw HTTP worker completed ${raw.jobs_per_s} jobs/s, ${raw.cpu_ms_per_job} ms CPU per job`,
  );
  bench.log('worker, profiled, draining what the ingress queued');
  const redis = new Redis(options.redisUrl);
  const statsBefore = await commandStats(redis);
  const drained = await whileUp(
    drainRate(bench, async () => [await startWorker(bench, sandbox, {}, profiling('worker'))]),
    sandbox.child,
  );
  await Promise.all(drained.workers.map((worker) => worker.stop()));
  const statsAfter = await commandStats(redis);
  const calls = diffCalls(statsAfter, statsBefore);
  redis.disconnect();
  bench.log(
    `worker completed ${drained.perSecond} actions/s, ${drained.workerCpuMsPerAction} ms CPU per action`,
  );
  report('ingress', `ingress at ${load.acceptedPerSecond} webhooks/s`);
  report(
    'raw-http-worker',
    `raw BullMQ worker making the same call, at ${raw.jobs_per_s} jobs/s (${raw.jobs} jobs)`,
  );
  report('worker', `worker at ${drained.perSecond} actions/s (${drained.completed} actions)`);
  // Counted by Redis for the whole drain, start and stop included, so a little high per action.
  const completed = await completedActions(options.redisUrl, bench.prefix);
  compareWorkers(raw.jobs, completed);
  const perAction = (n: number) => n / Math.max(1, completed);
  console.log(
    `Redis during the drain, per completed action (${completed} completed): ` +
      `${(perAction(statsAfter.cpuMs - statsBefore.cpuMs) * 1000).toFixed(0)} µs of its CPU; ` +
      `commands (calls, µs inside the command; a script's own commands are counted inside it too):`,
  );
  for (const [command, count, usec] of calls) {
    console.log(
      `  ${perAction(count).toFixed(2).padStart(6)}  ${perAction(usec).toFixed(1).padStart(6)} µs  ${command}`,
    );
  }
});
