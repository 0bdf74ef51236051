// The processes the bench measures: the Express echo, the sandbox, the ingress and the worker, each
// a ChildRun that the run tracks, started and awaited until it answers.
import { execFileSync } from 'node:child_process';
import { INGRESS_NODE_FLAGS } from '@pw/shared/runtime';
import { ChildRun, freePort, repoRoot } from '@pw/test-utils';
import type { BenchRun } from './bench-run.js';
import type { SandboxReady, SandboxStats } from './sandbox-process.js';

/** How long a process has to exit after SIGTERM before it is killed. */
const KILL_AFTER_MS = 15_000;

/** A process that answers HTTP on `url`. */
export interface Server {
  url: string;
  child: ChildRun;
}

export interface Sandbox {
  child: ChildRun;
  /** The variables that point the worker at its identity provider and partner API. */
  env: Record<string, string>;
}

/** `work`, or the error of the first of `processes` to exit before it is done. */
export function whileUp<T>(work: Promise<T>, ...processes: ChildRun[]): Promise<T> {
  return Promise.race([work, ...processes.map((child) => child.died)]);
}

function startNode(
  bench: BenchRun,
  name: string,
  args: string[],
  env: Record<string, string>,
): ChildRun {
  const options = { name, killAfterMs: KILL_AFTER_MS };
  return bench.track(ChildRun.start([process.execPath, ...args], env, options));
}

export async function startEcho(bench: BenchRun): Promise<Server> {
  const port = await freePort();
  const child = startNode(bench, 'echo', ['bench/src/echo-server.mjs', String(port)], {});
  await child.printed('echo listening');
  return { url: `http://127.0.0.1:${port}`, child };
}

/** The sandbox in a process of its own, once it has sent the variables that point at it. */
export async function startSandbox(bench: BenchRun): Promise<Sandbox> {
  const options = { name: 'sandbox', ipc: true, killAfterMs: KILL_AFTER_MS };
  const child = bench.track(ChildRun.tsx('bench/src/sandbox-process.ts', {}, options));
  const ready = await child.message((message) =>
    (message as SandboxReady | undefined)?.type === 'ready' ? (message as SandboxReady) : undefined,
  );
  return { child, env: ready.env };
}

/** The sandbox's counters: token requests and partner-API calls so far. */
export async function sandboxStats(sandbox: Sandbox): Promise<SandboxStats> {
  const answer = sandbox.child.message((message) =>
    (message as SandboxStats | undefined)?.type === 'stats' ? (message as SandboxStats) : undefined,
  );
  sandbox.child.child.send('stats');
  return answer;
}

/**
 * The built ingress (`workers` processes) on Redis at `redisUrl`, once it is ready. `v8Flags`:
 * by default those of its image's CMD, the ingress as it ships.
 */
export async function startIngress(
  bench: BenchRun,
  redisUrl: string,
  workers: number,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  v8Flags: readonly string[] = INGRESS_NODE_FLAGS,
): Promise<Server> {
  const port = await freePort();
  const args = [...v8Flags, ...nodeArgs, 'apps/ingress/dist/main.js'];
  const child = startNode(bench, 'ingress', args, {
    NODE_ENV: 'development',
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: bench.prefix,
    INGRESS_PORT: String(port),
    INGRESS_WORKERS: String(workers),
    WEBHOOK_SECRETS: bench.secret,
    LOG_LEVEL: 'warn',
    ...env,
  });
  // It prints nothing at LOG_LEVEL=warn: poll its readiness endpoint.
  await child.answers(`http://127.0.0.1:${port}/readyz`);
  return { url: `http://127.0.0.1:${port}`, child };
}

/** The built worker at the run's concurrency, calling the sandbox, once it is healthy. */
export async function startWorker(
  bench: BenchRun,
  sandbox: Sandbox,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<ChildRun> {
  bench.workerStarts++;
  const port = await freePort();
  const child = startNode(bench, 'worker', [...nodeArgs, 'apps/worker/dist/main.js'], {
    ...sandbox.env,
    NODE_ENV: 'development',
    REDIS_URL: bench.options.redisUrl,
    QUEUE_PREFIX: bench.prefix,
    WORKER_HEALTH_PORT: String(port),
    WORKER_CONCURRENCY: String(bench.options.concurrency),
    LOG_LEVEL: 'warn',
    ...env,
  });
  // Ready once it takes jobs (its /healthz answers while it still waits for Redis).
  await child.answers(`http://127.0.0.1:${port}/readyz`);
  return child;
}

/** The recorder, writing the record stream to `databaseUrl`; started before the worker it follows. */
export async function startRecorder(
  bench: BenchRun,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ChildRun> {
  const port = await freePort();
  const child = startNode(bench, 'recorder', ['apps/recorder/dist/main.js'], {
    NODE_ENV: 'development',
    REDIS_URL: bench.options.redisUrl,
    QUEUE_PREFIX: bench.prefix,
    DATABASE_URL: databaseUrl,
    RECORDER_HEALTH_PORT: String(port),
    LOG_LEVEL: 'warn',
    ...env,
  });
  await child.answers(`http://127.0.0.1:${port}/healthz`);
  return child;
}

/**
 * The raw HTTP worker baseline, draining `count` jobs with `token`; it prints its figures.
 * `nodeArgs`: node's own options (`--cpu-prof` for `npm run bench:profile`).
 */
export async function startRawHttpWorker(
  bench: BenchRun,
  sandbox: Sandbox,
  token: string,
  count: number,
  nodeArgs: string[] = [],
): Promise<ChildRun> {
  const child = startNode(
    bench,
    'raw-http-worker',
    [...nodeArgs, 'bench/src/raw-http-worker.mjs'],
    {
      REDIS_URL: bench.options.redisUrl,
      QUEUE_PREFIX: bench.prefix,
      CONCURRENCY: String(bench.options.concurrency),
      API_BASE_URL: sandbox.env.API_BASE_URL ?? '',
      TOKEN: token,
      COUNT: String(count),
    },
  );
  await child.printed('raw-http-worker ready');
  return child;
}

/**
 * `npm run build`, then the repository's root as the working directory: the phases start the
 * built apps (`apps/<app>/dist/main.js`) by their paths from there.
 */
export function buildApps(bench: BenchRun): void {
  bench.log('building the apps (npm run build)');
  execFileSync('npm', ['run', '-s', 'build'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.chdir(repoRoot);
}
