// `npm run bench`: the benchmark of the contract's section 9. One run measures the baselines (a
// bare Express JSON echo, raw BullMQ enqueue and no-op worker) and the real ingress and worker
// processes on the same machine, prints a table and writes bench/results.json.
import { execFileSync } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAMES } from '@pw/shared';
import type { WebhookJobData } from '@pw/shared';
import { deleteKeys, freePort, PrivateRedis } from '@pw/test-utils';
import { drive, EventPool } from './load.js';
import type { LoadResult } from './load.js';
import { percentile } from './percentiles.js';
import { Child, RssSampler } from './processes.js';
import { rawEnqueueRate, rawWorkerRate } from './raw-bullmq.js';
import { printTable } from './report.js';
import type { Results, Target } from './report.js';
import type { SandboxReady, SandboxStats } from './sandbox-process.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: process.env.WORKER_CONCURRENCY || '20' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results.json' },
  },
});
const quick = args.quick;
const duration = quick ? 1 : Number(args.duration);
const warmupSeconds = quick ? 0 : 2;
const connections = Number(args.connections);
const concurrency = Number(args.concurrency);
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const secret = 'bench-secret';
const rootPath = decodeURIComponent(new URL('../../', import.meta.url).pathname);
const cores = cpus().length;
const tokenLifetimeSeconds = 300; // the sandbox identity provider's default
const latencySampleSize = 2000;
const began = performance.now();
const log = (line: string) =>
  console.error(`bench: ${((performance.now() - began) / 1000).toFixed(1).padStart(5)} s  ${line}`);

if (![duration, connections, concurrency].every((n) => Number.isInteger(n) && n > 0)) {
  console.error(
    'usage: npm run bench -- [--duration S] [--connections N] [--concurrency N] [--quick] [--out FILE]',
  );
  process.exit(2);
}

const prefix = `pwbench-${Math.random().toString(36).slice(2, 10)}`;
const pool = new EventPool(secret);

// Everything the run starts, so that it is stopped and deleted however the run ends.
const children: Child[] = [];
const privateRedis: PrivateRedis[] = [];
const redisUsed = new Set<string>([redisUrl]);
let cleaning: Promise<void> | undefined;
/** Aborted when the run is interrupted: the in-process BullMQ loops stop adding jobs. */
const interrupted = new AbortController();

/** Keeps `child` to be stopped at the end; once clean-up has begun, stops it and gives up. */
function track(child: Child): Child {
  children.push(child);
  if (cleaning) {
    void child.stop();
    throw new Error('the bench is stopping');
  }
  return child;
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    // A phase may still start a process while the others stop: stop until none is left running.
    for (let stopped = 0; stopped < children.length;) {
      const batch = children.slice(stopped);
      stopped = children.length;
      await Promise.all(batch.map((child) => child.stop()));
    }
    for (const url of redisUsed) await clearKeys(url).catch(() => undefined);
    await Promise.all(privateRedis.map((redis) => redis.destroy()));
  })();
  return cleaning;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  // `on`, not `once`: Ctrl-C reaches the bench twice (from the terminal and relayed by npm and
  // tsx), and a second signal without a handler would kill it half-way through its clean-up.
  process.on(signal, () => {
    if (cleaning) return;
    interrupted.abort();
    log(`${signal}: stopping the processes and deleting the run's keys`);
    void cleanup().finally(() => process.exit(code));
  });
}

async function clearKeys(url: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await deleteKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

async function redisInfo(url: string): Promise<{ version: string; appendfsync: string }> {
  const redis = new Redis(url);
  try {
    const info = await redis.info('server');
    const fsync = await redis.config('GET', 'appendfsync');
    return {
      version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
      appendfsync: fsync[1] ?? 'unknown',
    };
  } finally {
    redis.disconnect();
  }
}

/** `work`, or the error of the first of `processes` to exit before it is done. */
function whileUp<T>(work: Promise<T>, ...processes: Child[]): Promise<T> {
  return Promise.race([work, ...processes.map((child) => child.died)]);
}

/** Polls the process's health endpoint (it prints nothing at LOG_LEVEL=warn) until it answers. */
async function waitHealthy(url: string, child: Child): Promise<void> {
  const poll = async () => {
    while (child.process.exitCode === null && child.process.signalCode === null) {
      try {
        if ((await fetch(url)).ok) return;
      } catch {
        // not listening yet
      }
      await delay(100);
    }
    throw new Error(`${child.name} exited at start:\n${child.output}`);
  };
  await whileUp(poll(), child);
}

async function startPrivateRedis(appendOnly: boolean): Promise<PrivateRedis> {
  const redis = await PrivateRedis.start({ appendOnly });
  privateRedis.push(redis);
  if (cleaning) {
    await redis.destroy();
    throw new Error('the bench is stopping');
  }
  redisUsed.add(redis.url);
  return redis;
}

async function startEcho(): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = track(Child.node('echo', ['bench/src/echo-server.mjs', String(port)], {}));
  await child.printed('echo listening');
  return { url: `http://127.0.0.1:${port}`, child };
}

async function startSandbox(): Promise<{ child: Child; env: Record<string, string> }> {
  const child = track(Child.fork('sandbox', 'bench/src/sandbox-process.ts', {}));
  const ready = await child.message((message) =>
    (message as SandboxReady | undefined)?.type === 'ready' ? (message as SandboxReady) : undefined,
  );
  return { child, env: ready.env };
}

async function sandboxStats(sandbox: Child): Promise<SandboxStats> {
  const answer = sandbox.message((message) =>
    (message as SandboxStats | undefined)?.type === 'stats' ? (message as SandboxStats) : undefined,
  );
  sandbox.process.send('stats');
  return answer;
}

async function startIngress(url: string, workers: number): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = track(
    Child.node('ingress', ['apps/ingress/dist/main.js'], {
      NODE_ENV: 'development',
      REDIS_URL: url,
      QUEUE_PREFIX: prefix,
      INGRESS_PORT: String(port),
      INGRESS_WORKERS: String(workers),
      WEBHOOK_SECRETS: secret,
      LOG_LEVEL: 'warn',
    }),
  );
  await waitHealthy(`http://127.0.0.1:${port}/readyz`, child);
  return { url: `http://127.0.0.1:${port}`, child };
}

let workerStarts = 0;

async function startWorker(url: string, env: Record<string, string>): Promise<Child> {
  workerStarts++;
  const port = await freePort();
  const child = track(
    Child.node('worker', ['apps/worker/dist/main.js'], {
      ...env,
      NODE_ENV: 'development',
      REDIS_URL: url,
      QUEUE_PREFIX: prefix,
      WORKER_HEALTH_PORT: String(port),
      WORKER_CONCURRENCY: String(concurrency),
      LOG_LEVEL: 'warn',
    }),
  );
  await waitHealthy(`http://127.0.0.1:${port}/healthz`, child);
  return child;
}

/**
 * Drives `url` for the phase, with fresh events: without `rate`, first a warm-up (JIT,
 * connections) whose pace also sizes the pool; with `rate`, a pool for that rate and no warm-up
 * (the target is warm already, and a warm-up at full speed would leave a backlog for the worker).
 * `repeat` (the echo) sends the same pool's events over and over.
 */
async function measure(
  url: string,
  options: { rate?: number; warmup?: boolean; recordAcks?: boolean; repeat?: boolean } = {},
): Promise<LoadResult> {
  const repeat = options.repeat ?? false;
  let expectedRate = options.rate ?? 5000;
  if (options.warmup !== false && warmupSeconds > 0) {
    pool.fill(repeat ? 1000 : warmupSeconds * 3000);
    const warm = await drive(pool, { url, connections, durationSeconds: warmupSeconds, repeat });
    if (options.rate === undefined) expectedRate = Math.max(2000, warm.acceptedPerSecond * 2);
  }
  if (repeat) {
    pool.fill(1000);
    return drive(pool, { url, connections, durationSeconds: duration, repeat });
  }
  pool.fill(Math.ceil(duration * expectedRate * 1.05) + connections);
  const ranDry = pool.ranDry;
  const result = await drive(pool, {
    url,
    connections,
    durationSeconds: duration,
    rate: options.rate,
    recordAcks: options.recordAcks,
  });
  if (pool.ranDry > ranDry) log(`(${pool.ranDry - ranDry} events signed during the run)`);
  return result;
}

/**
 * Our worker draining a backlog the ingress queued while it was stopped: completed actions per
 * second, counted from its first completion for `seconds`, or until the backlog is gone.
 */
async function drainRate(
  url: string,
  seconds: number,
  start: () => Promise<Child>,
): Promise<{ perSecond: number; completed: number; seconds: number; worker: Child }> {
  const connection = { url };
  const actions = new Queue(QUEUE_NAMES.actions, { connection, prefix });
  const webhooks = new Queue(QUEUE_NAMES.webhooks, { connection, prefix });
  const events = new QueueEvents(QUEUE_NAMES.actions, { connection, prefix });
  try {
    await events.waitUntilReady();
    const firstCompletion = once(events as EventEmitter, 'completed');
    const worker = await start();
    await whileUp(firstCompletion, worker);
    const completed = async () => (await actions.getJobCounts('completed')).completed ?? 0;
    const before = await completed();
    const started = performance.now();
    const left = async () => {
      const [a, w] = await Promise.all([
        actions.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
        webhooks.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
      ]);
      return [...Object.values(a), ...Object.values(w)].reduce((sum, n) => sum + n, 0);
    };
    // The actions queue empties now and then while the fan-out catches up: check both queues.
    const backlogGone = new Promise<void>((resolve) => {
      events.on('drained', () => {
        void left().then((n) => n === 0 && resolve());
      });
    });
    const window = new AbortController();
    await whileUp(
      Promise.race([delay(seconds * 1000, undefined, { signal: window.signal }), backlogGone]),
      worker,
    );
    window.abort();
    const after = await completed();
    const elapsed = (performance.now() - started) / 1000;
    return {
      perSecond: Math.round((after - before) / elapsed),
      completed: after - before,
      seconds: Math.round(elapsed * 100) / 100,
      worker,
    };
  } finally {
    await Promise.all([events.close(), actions.close(), webhooks.close()]);
  }
}

/**
 * Enqueue-to-start and ack-to-start (the earliest of a webhook's action jobs' `processedOn`) of up
 * to 2,000 acknowledged webhooks, spread evenly over the phase. Waits, woken by the actions
 * queue's events, until each sampled webhook has an action started.
 */
async function startLatencies(url: string, acks: Map<string, number>, processes: Child[]) {
  const connection = { url };
  const webhooks = new Queue<WebhookJobData>(QUEUE_NAMES.webhooks, { connection, prefix });
  const actions = new Queue(QUEUE_NAMES.actions, { connection, prefix });
  const events = new QueueEvents(QUEUE_NAMES.actions, { connection, prefix });
  const all = [...acks];
  // --quick takes the first webhooks only, not to wait for the backlog a slow worker builds up.
  const step = quick ? 1 : Math.max(1, Math.ceil(all.length / latencySampleSize));
  const sample = all.filter((_, index) => index % step === 0).slice(0, quick ? 200 : undefined);
  const started = new Set<string>();
  const waiters = new Map<string, () => void>();
  events.on('active', ({ jobId }) => {
    const webhookId = jobId.slice(0, jobId.lastIndexOf('.'));
    started.add(webhookId);
    waiters.get(webhookId)?.();
  });
  const firstStart = async (webhookId: string): Promise<number | undefined> => {
    const webhook = await webhooks.getJob(webhookId);
    if (!webhook) return undefined;
    const jobs = await Promise.all(
      webhook.data.actions.map((action) => actions.getJob(`${webhookId}.${action}`)),
    );
    const starts = jobs.flatMap((job) => (job?.processedOn ? [job.processedOn] : []));
    return starts.length > 0 ? Math.min(...starts) : undefined;
  };
  const enqueueToStart: number[] = [];
  const ackToStart: number[] = [];
  try {
    await events.waitUntilReady();
    // A worker that stops starting actions (it should not) leaves the rest of the sample out.
    const giveUpAt = Date.now() + 120_000;
    for (const [webhookId, ackAt] of sample) {
      let start = await firstStart(webhookId);
      if (start === undefined) {
        // Not started yet: wait for its first `active` event (or a minute, for a stuck worker).
        const woken = new Promise<void>((resolve) => waiters.set(webhookId, resolve));
        const timeout = new AbortController();
        if (!started.has(webhookId)) {
          await whileUp(
            Promise.race([
              woken,
              delay(Math.max(0, giveUpAt - Date.now()), undefined, {
                signal: timeout.signal,
              }).catch(() => undefined),
            ]),
            ...processes,
          );
        }
        timeout.abort();
        waiters.delete(webhookId);
        start = await firstStart(webhookId);
      }
      const webhook = start === undefined ? undefined : await webhooks.getJob(webhookId);
      if (start === undefined || !webhook) continue;
      enqueueToStart.push(start - webhook.timestamp);
      ackToStart.push(start - ackAt);
    }
  } finally {
    await Promise.all([events.close(), webhooks.close(), actions.close()]);
  }
  return {
    sampled: enqueueToStart.length,
    enqueue_to_start_p50_ms: percentile(enqueueToStart, 50),
    enqueue_to_start_p99_ms: percentile(enqueueToStart, 99),
    ack_to_start_p50_ms: percentile(ackToStart, 50),
    ack_to_start_p99_ms: percentile(ackToStart, 99),
  };
}

async function main(): Promise<Results> {
  log('building the apps (npm run build)');
  execFileSync('npm', ['run', '-s', 'build'], {
    cwd: rootPath,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.chdir(rootPath);
  const startedAt = new Date();
  const mainRedis = await redisInfo(redisUrl);
  log(`Redis ${mainRedis.version} at ${new URL(redisUrl).host}, keys under ${prefix}:`);

  pool.fill(1000);
  const bodyBytes = pool.meanBodyBytes();
  log('baseline: bare Express JSON echo');
  const echo = await startEcho();
  let sampler = new RssSampler({ echo: echo.child.pid });
  const echoLoad = await whileUp(measure(echo.url, { repeat: true }), echo.child);
  const echoRss = sampler.stop();
  await echo.child.stop();

  log('baseline: raw BullMQ enqueue (100 in flight) and no-op worker');
  const rawEnqueue = await rawEnqueueRate(redisUrl, prefix, duration, interrupted.signal);
  const rawWorker = await rawWorkerRate(
    redisUrl,
    prefix,
    quick ? 2000 : 20_000,
    concurrency,
    interrupted.signal,
  );

  log('sandbox: identity provider and partner API (its own process)');
  const sandbox = await startSandbox();

  log('ingress, one process (worker stopped)');
  let ingress = await startIngress(redisUrl, 1);
  sampler = new RssSampler({ ingress: ingress.child.pid });
  const single = await whileUp(measure(ingress.url), ingress.child);
  const singleRss = sampler.stop();
  await ingress.child.stop();

  log(`ingress, ${cores} processes (worker stopped)`);
  ingress = await startIngress(redisUrl, cores);
  sampler = new RssSampler({ ingress: ingress.child.pid });
  const clustered = await whileUp(measure(ingress.url), ingress.child);
  const clusterRss = sampler.stop();
  const clusterProcessRss = sampler.peakProcessMb('ingress');

  log('worker draining the backlog the ingress runs queued');
  const backlogQueue = new Queue(QUEUE_NAMES.webhooks, { connection: { url: redisUrl }, prefix });
  const backlog = await backlogQueue.count();
  await backlogQueue.close();
  sampler = new RssSampler({ sandbox: sandbox.child.pid });
  const drained = await whileUp(
    drainRate(redisUrl, duration, async () => {
      const worker = await startWorker(redisUrl, sandbox.env);
      sampler.add('worker', worker.pid);
      return worker;
    }),
    sandbox.child,
  );
  const drainRss = sampler.stop();
  await drained.worker.stop();
  await clearKeys(redisUrl);

  log('2,000 webhooks/s offered while the worker drains');
  let worker = await startWorker(redisUrl, sandbox.env);
  sampler = new RssSampler({
    ingress: ingress.child.pid,
    worker: worker.pid,
    sandbox: sandbox.child.pid,
  });
  const sustained = await whileUp(
    measure(ingress.url, { rate: 2000, warmup: false }),
    ingress.child,
    worker,
    sandbox.child,
  );
  const sustainedRss = sampler.stop();
  const sustainedProcessRss = sampler.peakProcessMb('ingress');
  await worker.stop();
  await clearKeys(redisUrl);

  log('1,000 webhooks/s offered: enqueue and ack to action start');
  worker = await startWorker(redisUrl, sandbox.env);
  const paced = await whileUp(
    measure(ingress.url, { rate: 1000, warmup: false, recordAcks: true }),
    ingress.child,
    worker,
    sandbox.child,
  );
  const latency = await startLatencies(redisUrl, paced.acks ?? new Map<string, number>(), [
    worker,
    sandbox.child,
  ]);
  await worker.stop();
  await ingress.child.stop();
  await clearKeys(redisUrl);

  log('private Redis servers, appendonly no and appendonly yes (appendfsync everysec)');
  const [plainRedis, aofRedis] = await Promise.all([
    startPrivateRedis(false),
    startPrivateRedis(true),
  ]);
  const aofInfo = await redisInfo(aofRedis.url);
  const durability: Record<'plain' | 'aof', { enqueue: number; ingress: number }> = {
    plain: { enqueue: 0, ingress: 0 },
    aof: { enqueue: 0, ingress: 0 },
  };
  for (const [name, server] of [
    ['plain', plainRedis],
    ['aof', aofRedis],
  ] as const) {
    durability[name].enqueue = await rawEnqueueRate(
      server.url,
      prefix,
      duration,
      interrupted.signal,
    );
  }
  for (const [name, server] of [
    ['plain', plainRedis],
    ['aof', aofRedis],
  ] as const) {
    const privateIngress = await startIngress(server.url, 1);
    durability[name].ingress = (
      await whileUp(measure(privateIngress.url), privateIngress.child)
    ).acceptedPerSecond;
    await privateIngress.child.stop();
  }

  const tokens = await sandboxStats(sandbox.child);
  const runSeconds = Math.round((Date.now() - startedAt.getTime()) / 1000);

  const round2 = (n: number) => Math.round(n * 100) / 100;
  const ratio = (a: number, b: number) => (b > 0 ? round2(a / b) : 0);
  const cost = (durable: number, plain: number) =>
    plain > 0 ? Math.round((1 - durable / plain) * 1000) / 10 : 0;

  const figures = {
    echo: {
      accepted_per_s: echoLoad.acceptedPerSecond,
      p50_ms: echoLoad.p50Ms,
      p99_ms: echoLoad.p99Ms,
      rss_mb: echoRss.echo ?? 0,
    },
    raw_bullmq: { enqueue_per_s: rawEnqueue, noop_worker_jobs_per_s: rawWorker, concurrency },
    ingress_single: {
      accepted_per_s: single.acceptedPerSecond,
      p50_ms: single.p50Ms,
      p99_ms: single.p99Ms,
      non_2xx: single.non2xx,
      errors: single.errors,
      rss_mb: singleRss.ingress ?? 0,
    },
    ingress_cluster: {
      processes: cores,
      accepted_per_s: clustered.acceptedPerSecond,
      p50_ms: clustered.p50Ms,
      p99_ms: clustered.p99Ms,
      non_2xx: clustered.non2xx,
      errors: clustered.errors,
      rss_mb_total: clusterRss.ingress ?? 0,
      rss_mb_largest_process: clusterProcessRss,
    },
    worker: {
      actions_per_s: drained.perSecond,
      actions_counted: drained.completed,
      window_s: drained.seconds,
      backlog_webhooks: backlog,
      concurrency,
      rss_mb: drainRss.worker ?? 0,
    },
    sustained_2000: {
      offered_per_s: 2000,
      accepted_per_s: sustained.acceptedPerSecond,
      p50_ms: sustained.p50Ms,
      p99_ms: sustained.p99Ms,
      non_2xx: sustained.non2xx,
      errors: sustained.errors,
    },
    paced_1000: { offered_per_s: 1000, accepted_per_s: paced.acceptedPerSecond, ...latency },
    rss_peak_mb: {
      ingress_per_process: Math.max(singleRss.ingress ?? 0, clusterProcessRss, sustainedProcessRss),
      ingress_cluster_total: Math.max(clusterRss.ingress ?? 0, sustainedRss.ingress ?? 0),
      worker: Math.max(drainRss.worker ?? 0, sustainedRss.worker ?? 0),
      sandbox: Math.max(drainRss.sandbox ?? 0, sustainedRss.sandbox ?? 0),
    },
    tokens: {
      requests: tokens.tokenRequests,
      partner_api_calls: tokens.apiCalls,
      worker_processes_started: workerStarts,
      token_lifetime_s: tokenLifetimeSeconds,
      run_s: runSeconds,
    },
    aof_everysec: {
      appendfsync: aofInfo.appendfsync,
      plain_raw_enqueue_per_s: durability.plain.enqueue,
      aof_raw_enqueue_per_s: durability.aof.enqueue,
      plain_ingress_single_accepted_per_s: durability.plain.ingress,
      aof_ingress_single_accepted_per_s: durability.aof.ingress,
      raw_enqueue_cost_pct: cost(durability.aof.enqueue, durability.plain.enqueue),
      ingress_cost_pct: cost(durability.aof.ingress, durability.plain.ingress),
      ingress_cost_vs_main_run_pct: cost(durability.aof.ingress, single.acceptedPerSecond),
    },
  };
  const ratios = {
    ingress_single_vs_echo: ratio(single.acceptedPerSecond, echoLoad.acceptedPerSecond),
    ingress_cluster_vs_echo: ratio(clustered.acceptedPerSecond, echoLoad.acceptedPerSecond),
    ack_p99_vs_echo_p99: ratio(clustered.p99Ms, echoLoad.p99Ms),
    ack_p99_single_vs_echo_p99: ratio(single.p99Ms, echoLoad.p99Ms),
    actions_vs_raw_noop_worker: ratio(drained.perSecond, rawWorker),
    aof_cost_pct: figures.aof_everysec.ingress_cost_pct,
  };
  // Each worker process has a token manager of its own: one token per process per lifetime.
  const tokensAllowed = workerStarts * Math.ceil(runSeconds / tokenLifetimeSeconds);
  const target = (name: string, goal: string, value: number, met: boolean): Target => ({
    name,
    target: goal,
    value,
    met,
  });
  const targets = [
    target(
      'ingress, all cores, vs echo',
      '>= 0.8',
      ratios.ingress_cluster_vs_echo,
      ratios.ingress_cluster_vs_echo >= 0.8,
    ),
    target(
      'ingress, one process, vs echo',
      '>= 0.65',
      ratios.ingress_single_vs_echo,
      ratios.ingress_single_vs_echo >= 0.65,
    ),
    target(
      'ack p99 (all cores) vs echo p99',
      '<= 2',
      ratios.ack_p99_vs_echo_p99,
      ratios.ack_p99_vs_echo_p99 <= 2,
    ),
    target(
      '2,000/s offered: accepted/s',
      '>= 1,960',
      sustained.acceptedPerSecond,
      sustained.acceptedPerSecond >= 1960,
    ),
    target('2,000/s offered: ack p99 ms', '<= 35', sustained.p99Ms, sustained.p99Ms <= 35),
    target(
      'no-op actions vs raw no-op worker',
      '>= 0.7',
      ratios.actions_vs_raw_noop_worker,
      ratios.actions_vs_raw_noop_worker >= 0.7,
    ),
    target(
      'enqueue to start p50 ms at 1,000/s',
      '<= 1',
      latency.enqueue_to_start_p50_ms,
      latency.sampled > 0 && latency.enqueue_to_start_p50_ms <= 1,
    ),
    target(
      'enqueue to start p99 ms at 1,000/s',
      '<= 5',
      latency.enqueue_to_start_p99_ms,
      latency.sampled > 0 && latency.enqueue_to_start_p99_ms <= 5,
    ),
    target(
      'ingress RSS MB, largest process',
      '<= 150',
      figures.rss_peak_mb.ingress_per_process,
      figures.rss_peak_mb.ingress_per_process <= 150,
    ),
    target(
      'token requests (1 per worker per lifetime)',
      `<= ${tokensAllowed}`,
      tokens.tokenRequests,
      tokens.tokenRequests <= tokensAllowed,
    ),
    target(
      'AOF everysec cost on the ingress, %',
      '< 10',
      ratios.aof_cost_pct,
      ratios.aof_cost_pct < 10,
    ),
  ];

  const machine = {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores,
    node: process.version,
    redis: mainRedis.version,
    date: startedAt.toISOString(),
    duration_s: duration,
    connections,
    concurrency,
    quick,
    event_body_bytes_mean: bodyBytes,
  };
  const notes = {
    worker:
      "Our worker's actions/s include, for every action, a partner-API HTTP call (the sandbox " +
      'answers 200 at once) with a bearer token from the token manager, the outcome-record writes ' +
      'and change notification, the out-of-order check for state-changing actions, and its share ' +
      "of the fan-out (webhooks job -> action jobs). The raw no-op worker's jobs do nothing.",
    rss: 'Peak VmRSS from /proc during load; the ingress cluster counts the primary and its children. The sandbox runs under tsx.',
    aof:
      'Both private redis-server processes have the same flags but appendonly; ' +
      'ingress_cost_vs_main_run_pct compares with the main run (another Redis).',
    latency:
      'enqueue-to-start: first action job processedOn - webhooks job timestamp; ack-to-start: the same ' +
      'processedOn - when the load generator received the ack (one machine clock).',
  };
  return { machine, figures, ratios, targets, notes };
}

try {
  const results = await main();
  writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
  printTable(results);
  log(`wrote ${args.out}`);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
// A phase cut short by a failure may leave a load generator or a timer behind: do not wait for it.
process.exit();
