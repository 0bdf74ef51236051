// `npm run bench:profile`: where the ingress and the worker spend their CPU. It queues webhooks
// through one ingress process run with `node --cpu-prof`, then lets a worker, also profiled, drain
// them, and prints each profile's self time by package and by function. The profiles stay in
// bench/profiles/ to open in Chrome's DevTools (Performance, "Load profile").
import { Redis } from 'ioredis';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { QUEUE_NAMES } from '@pw/shared';
import { repoRoot } from '@pw/test-utils';
import { BenchRun } from './bench-run.js';
import { formatSummary, readProfile, summarize } from './cpu-profile.js';
import { measure } from './measure.js';
import { readOptions } from './options.js';
import { drainRate } from './phases/worker-drain.js';
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

function report(name: string, title: string): void {
  const files = readdirSync(join(dir, name)).filter((file) => file.endsWith('.cpuprofile'));
  for (const file of files) {
    console.log(
      `${formatSummary(`${title} (${name}/${file})`, summarize(readProfile(join(dir, name, file))))}\n`,
    );
  }
}

/** Calls of each command so far, as `INFO commandstats` counts them. */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(match[1]!, Number(match[2]));
  }
  return calls;
}

/** The calls made between two counts, largest first; the INFO calls themselves left out. */
function diffCalls(after: Map<string, number>, before: Map<string, number>): [string, number][] {
  return [...after]
    .map(([command, count]): [string, number] => [command, count - (before.get(command) ?? 0)])
    .filter(([command, count]) => count > 0 && command !== 'info')
    .sort((a, b) => b[1] - a[1]);
}

async function completedActions(redisUrl: string, prefix: string): Promise<number> {
  const actions = new Queue(QUEUE_NAMES.actions, { connection: { url: redisUrl }, prefix });
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
  bench.log('worker, profiled, draining what the ingress queued');
  const redis = new Redis(options.redisUrl);
  const callsBefore = await commandCalls(redis);
  const drained = await whileUp(
    drainRate(bench, async () => [await startWorker(bench, sandbox, {}, profiling('worker'))]),
    sandbox.child,
  );
  await Promise.all(drained.workers.map((worker) => worker.stop()));
  const calls = diffCalls(await commandCalls(redis), callsBefore);
  redis.disconnect();
  bench.log(
    `worker completed ${drained.perSecond} actions/s, ${drained.workerCpuMsPerAction} ms CPU per action`,
  );
  report('ingress', `ingress at ${load.acceptedPerSecond} webhooks/s`);
  report('worker', `worker at ${drained.perSecond} actions/s (${drained.completed} actions)`);
  // Counted by Redis for the whole drain, start and stop included, so a little high per action.
  const completed = await completedActions(options.redisUrl, bench.prefix);
  console.log(`Redis commands per completed action (${completed} completed), whole drain:`);
  for (const [command, count] of calls) {
    console.log(`  ${(count / Math.max(1, completed)).toFixed(2).padStart(6)}  ${command}`);
  }
});
