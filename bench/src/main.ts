// `npm run bench`: the benchmark of the contract's section 9. One run measures the baselines (a
// bare Express JSON echo, raw BullMQ enqueue and no-op worker) and the real ingress and worker
// processes on the same machine, prints a table and writes bench/results.json.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAMES } from '@pw/shared';
import type { WebhookJobData } from '@pw/shared';
import { startSandbox } from '@pw/sandbox';
import { deleteKeys, freePort, PrivateRedis } from '@pw/test-utils';
import { drive, EventPool } from './load.js';
import type { LoadResult } from './load.js';
import { percentile } from './percentiles.js';
import { Child, RssSampler } from './processes.js';
import { rawEnqueueRate, rawWorkerRate } from './raw-bullmq.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '20' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results.json' },
  },
});
const quick = args.quick;
const duration = quick ? 1 : Number(args.duration);
const connections = Number(args.connections);
const concurrency = Number(args.concurrency);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const secret = 'bench-secret';
const root = new URL('../../', import.meta.url);
const rootPath = decodeURIComponent(root.pathname);
const cores = cpus().length;
const log = (line: string) => console.error(`bench: ${line}`);

if (![duration, connections, concurrency].every((n) => Number.isInteger(n) && n > 0)) {
  console.error(
    'usage: npm run bench -- [--duration S] [--connections N] [--concurrency N] [--quick]',
  );
  process.exit(2);
}

const prefix = `pwbench${Math.random().toString(36).slice(2, 8)}`;
const pool = new EventPool(secret);
/** Enough fresh events for a phase at up to 10,000 requests a second. */
const fillFor = (seconds: number, rate = 10_000) => pool.fill(Math.ceil(seconds * rate * 1.1));
const children: Child[] = [];

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url);
  const info = await redis.info('server');
  redis.disconnect();
  return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
}

async function waitHealthy(url: string, child: Child): Promise<void> {
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`${child.name} died:\n${child.output}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startEcho(): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = Child.node('echo', ['bench/src/echo-server.mjs', String(port)], {});
  children.push(child);
  await child.printed('echo listening');
  return { url: `http://127.0.0.1:${port}`, child };
}

async function startIngress(url: string, workers: number): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = Child.node('ingress', ['apps/ingress/dist/main.js'], {
    NODE_ENV: 'development',
    REDIS_URL: url,
    QUEUE_PREFIX: prefix,
    INGRESS_PORT: String(port),
    INGRESS_WORKERS: String(workers),
    WEBHOOK_SECRETS: secret,
    LOG_LEVEL: 'warn',
  });
  children.push(child);
  await waitHealthy(`http://127.0.0.1:${port}/readyz`, child);
  return { url: `http://127.0.0.1:${port}`, child };
}

let workerStarts = 0;

async function startWorker(url: string, env: Record<string, string>): Promise<Child> {
  workerStarts++;
  const port = await freePort();
  const child = Child.node('worker', ['apps/worker/dist/main.js'], {
    ...env,
    REDIS_URL: url,
    QUEUE_PREFIX: prefix,
    WORKER_HEALTH_PORT: String(port),
    WORKER_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'warn',
  });
  children.push(child);
  await waitHealthy(`http://127.0.0.1:${port}/healthz`, child);
  return child;
}

async function clearQueues(url: string): Promise<void> {
  const redis = new Redis(url);
  await deleteKeys(redis, prefix);
  redis.disconnect();
}

/** Warms the target up (JIT, connections), then drives it for the phase. */
async function measure(url: string, rate?: number, recordAcks = false): Promise<LoadResult> {
  fillFor(quick ? 1 : 2);
  await drive(pool, { url, connections, durationSeconds: quick ? 1 : 2 });
  fillFor(duration, rate ?? 10_000);
  return drive(pool, { url, connections, durationSeconds: duration, rate, recordAcks });
}

/** Completed actions per second over `seconds`, from BullMQ's counts. */
async function drainRate(url: string, seconds: number): Promise<number> {
  const actions = new Queue(QUEUE_NAMES.actions, { connection: { url }, prefix });
  const completed = async () => (await actions.getJobCounts('completed')).completed ?? 0;
  // Wait until the worker is at full speed, then count over the window.
  while ((await completed()) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  const before = await completed();
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const rate = ((await completed()) - before) / ((Date.now() - started) / 1000);
  await actions.close();
  return Math.round(rate);
}

/** Enqueue-to-start and ack-to-start of the first action of up to 2,000 acknowledged webhooks. */
async function startLatencies(url: string, acks: Map<string, number>) {
  const webhooks = new Queue<WebhookJobData>(QUEUE_NAMES.webhooks, { connection: { url }, prefix });
  const actions = new Queue(QUEUE_NAMES.actions, { connection: { url }, prefix });
  const sample = [...acks].slice(0, 2000);
  // Wait (at most a minute) until the worker has started every sampled webhook's actions.
  const last = sample.at(-1);
  const giveUpAt = Date.now() + 60_000;
  while (last && Date.now() < giveUpAt) {
    const webhook = await webhooks.getJob(last[0]);
    const first = webhook && (await actions.getJob(`${last[0]}.${webhook.data.actions[0]}`));
    if (first?.processedOn) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const enqueueToStart: number[] = [];
  const ackToStart: number[] = [];
  for (const [webhookId, ackAt] of sample) {
    const webhook = await webhooks.getJob(webhookId);
    if (!webhook) continue;
    let start = Infinity;
    for (const action of webhook.data.actions) {
      const job = await actions.getJob(`${webhookId}.${action}`);
      if (job?.processedOn) start = Math.min(start, job.processedOn);
    }
    if (!Number.isFinite(start)) continue;
    enqueueToStart.push(start - webhook.timestamp);
    ackToStart.push(start - ackAt);
  }
  await Promise.all([webhooks.close(), actions.close()]);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    sampled: enqueueToStart.length,
    enqueue_to_start_p50_ms: round(percentile(enqueueToStart, 50)),
    enqueue_to_start_p99_ms: round(percentile(enqueueToStart, 99)),
    ack_to_start_p50_ms: round(percentile(ackToStart, 50)),
    ack_to_start_p99_ms: round(percentile(ackToStart, 99)),
  };
}

async function main() {
  log('building the apps (npm run build)');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: rootPath, stdio: 'ignore' });
  process.chdir(rootPath);
  const startedAt = new Date();

  log('baseline: bare Express JSON echo');
  const echo = await startEcho();
  const echoSampler = new RssSampler({ echo: echo.child.pid });
  const echoLoad = await measure(echo.url);
  const echoRss = echoSampler.stop();
  await echo.child.stop();

  log('baseline: raw BullMQ enqueue and no-op worker');
  const rawEnqueue = await rawEnqueueRate(redisUrl, prefix, duration);
  const rawWorker = await rawWorkerRate(redisUrl, prefix, quick ? 2000 : 20_000, concurrency);

  const sandbox = await startSandbox({ idpPort: 0, apiPort: 0, recordCalls: false });
  try {
    log('ingress, one process (worker stopped)');
    let ingress = await startIngress(redisUrl, 1);
    let sampler = new RssSampler({ ingress: ingress.child.pid });
    const single = await measure(ingress.url);
    const singleRss = sampler.stop();
    await ingress.child.stop();

    log(`ingress, ${cores} processes (worker stopped)`);
    ingress = await startIngress(redisUrl, cores);
    sampler = new RssSampler({ ingress: ingress.child.pid });
    const clustered = await measure(ingress.url);
    const clusterRss = sampler.stop();
    const clusterProcessRss = sampler.peakProcessMb('ingress');

    log('worker draining what the ingress runs queued');
    let worker = await startWorker(redisUrl, sandbox.env);
    sampler = new RssSampler({ worker: worker.pid });
    const drained = await drainRate(redisUrl, duration);
    const workerRss = sampler.stop();
    await worker.stop();
    await clearQueues(redisUrl);

    log('2,000 webhooks/s offered while the worker drains');
    worker = await startWorker(redisUrl, sandbox.env);
    sampler = new RssSampler({ ingress: ingress.child.pid, worker: worker.pid });
    const sustained = await measure(ingress.url, 2000);
    const sustainedRss = sampler.stop();
    const sustainedProcessRss = sampler.peakProcessMb('ingress');
    await worker.stop();
    await clearQueues(redisUrl);

    log('1,000 webhooks/s offered: enqueue and ack to action start');
    worker = await startWorker(redisUrl, sandbox.env);
    const paced = await measure(ingress.url, 1000, true);
    const latency = await startLatencies(redisUrl, paced.acks ?? new Map<string, number>());
    await worker.stop();
    await ingress.child.stop();
    await clearQueues(redisUrl);

    log('the same Redis with appendonly yes, appendfsync everysec');
    const aofRedis = await PrivateRedis.start({ appendOnly: true });
    let aof;
    try {
      const aofEnqueue = await rawEnqueueRate(aofRedis.url, prefix, duration);
      const aofIngress = await startIngress(aofRedis.url, 1);
      const aofSingle = await measure(aofIngress.url);
      await aofIngress.child.stop();
      aof = {
        raw_enqueue_per_s: aofEnqueue,
        ingress_single_accepted_per_s: aofSingle.acceptedPerSecond,
      };
    } finally {
      await aofRedis.destroy();
    }

    const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);
    const cost = (durable: number, plain: number) =>
      plain > 0 ? Math.round((1 - durable / plain) * 1000) / 10 : 0;
    const figures = {
      echo: {
        accepted_per_s: echoLoad.acceptedPerSecond,
        p50_ms: echoLoad.p50Ms,
        p99_ms: echoLoad.p99Ms,
        rss_mb: echoRss.echo,
      },
      raw_bullmq: { enqueue_per_s: rawEnqueue, noop_worker_jobs_per_s: rawWorker, concurrency },
      ingress_single: {
        accepted_per_s: single.acceptedPerSecond,
        p50_ms: single.p50Ms,
        p99_ms: single.p99Ms,
        non_2xx: single.non2xx,
        errors: single.errors,
        rss_mb: singleRss.ingress,
      },
      ingress_cluster: {
        processes: cores,
        accepted_per_s: clustered.acceptedPerSecond,
        p50_ms: clustered.p50Ms,
        p99_ms: clustered.p99Ms,
        non_2xx: clustered.non2xx,
        errors: clustered.errors,
        rss_mb: clusterRss.ingress,
        rss_mb_per_process: clusterProcessRss,
      },
      worker: { actions_per_s: drained, concurrency, rss_mb: workerRss.worker },
      sustained_2000: {
        offered_per_s: 2000,
        accepted_per_s: sustained.acceptedPerSecond,
        p99_ms: sustained.p99Ms,
        non_2xx: sustained.non2xx,
        ingress_rss_mb: sustainedRss.ingress,
        worker_rss_mb: sustainedRss.worker,
      },
      paced_1000: { offered_per_s: 1000, accepted_per_s: paced.acceptedPerSecond, ...latency },
      tokens: {
        requests: sandbox.idp.tokenRequests,
        worker_processes_started: workerStarts,
        lifetime_s: 300,
        run_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
      },
      aof_everysec: {
        ...aof,
        raw_enqueue_cost_pct: cost(aof.raw_enqueue_per_s, rawEnqueue),
        ingress_cost_pct: cost(aof.ingress_single_accepted_per_s, single.acceptedPerSecond),
      },
    };
    const ratios = {
      ingress_single_vs_echo: ratio(single.acceptedPerSecond, echoLoad.acceptedPerSecond),
      ingress_cluster_vs_echo: ratio(clustered.acceptedPerSecond, echoLoad.acceptedPerSecond),
      ack_p99_vs_echo_p99: ratio(clustered.p99Ms, echoLoad.p99Ms),
      actions_vs_raw_noop_worker: ratio(drained, rawWorker),
    };
    // Per ingress process: the cluster's processes each hold a whole ingress.
    const maxRss = Math.max(singleRss.ingress ?? 0, clusterProcessRss, sustainedProcessRss);
    // Each worker process gets its own token, and a new one per lifetime.
    const tokensAllowed = workerStarts * Math.ceil(figures.tokens.run_s / 300);
    const targets = [
      [
        'ingress, all cores, vs echo',
        '>= 0.8',
        ratios.ingress_cluster_vs_echo,
        ratios.ingress_cluster_vs_echo >= 0.8,
      ],
      [
        'ingress, one process, vs echo',
        '>= 0.65',
        ratios.ingress_single_vs_echo,
        ratios.ingress_single_vs_echo >= 0.65,
      ],
      ['ack p99 vs echo p99', '<= 2', ratios.ack_p99_vs_echo_p99, ratios.ack_p99_vs_echo_p99 <= 2],
      [
        '2,000/s sustained, p99 ms',
        '<= 35',
        sustained.p99Ms,
        sustained.acceptedPerSecond >= 1900 && sustained.p99Ms <= 35,
      ],
      [
        'actions vs raw no-op worker',
        '>= 0.7',
        ratios.actions_vs_raw_noop_worker,
        ratios.actions_vs_raw_noop_worker >= 0.7,
      ],
      [
        'enqueue to start p50 ms at 1,000/s',
        '<= 1',
        latency.enqueue_to_start_p50_ms,
        latency.sampled > 0 && latency.enqueue_to_start_p50_ms <= 1,
      ],
      [
        'enqueue to start p99 ms at 1,000/s',
        '<= 5',
        latency.enqueue_to_start_p99_ms,
        latency.sampled > 0 && latency.enqueue_to_start_p99_ms <= 5,
      ],
      ['ingress RSS MB under load', '<= 150', maxRss, maxRss <= 150],
      [
        'token requests in the run',
        `<= ${tokensAllowed}`,
        sandbox.idp.tokenRequests,
        sandbox.idp.tokenRequests <= tokensAllowed,
      ],
      [
        'AOF everysec cost on the ingress, %',
        '< 10',
        figures.aof_everysec.ingress_cost_pct,
        figures.aof_everysec.ingress_cost_pct < 10,
      ],
    ].map(([name, target, value, met]) => ({ name, target, value, met }));

    const machine = {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores,
      node: process.version,
      redis: await redisVersion(redisUrl),
      date: startedAt.toISOString(),
      duration_s: duration,
      connections,
    };
    const results = { machine, figures, ratios, targets };
    writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
    printTable(results);
    log(`wrote ${args.out}`);
  } finally {
    await sandbox.stop();
  }
}

function printTable(results: {
  machine: Record<string, unknown>;
  figures: Record<string, Record<string, unknown>>;
  targets: { name: unknown; target: unknown; value: unknown; met: unknown }[];
}) {
  const m = results.machine;
  console.log(
    `\n${String(m.cpu)}, ${String(m.cores)} cores, Node ${String(m.node)}, Redis ${String(m.redis)}, ${String(m.date)}`,
  );
  console.log(`${String(m.duration_s)} s per phase, ${String(m.connections)} connections\n`);
  for (const [name, values] of Object.entries(results.figures)) {
    const cells = Object.entries(values).map(([key, value]) => `${key} ${String(value)}`);
    console.log(`${name.padEnd(16)} ${cells.join(', ')}`);
  }
  console.log('\ntarget                                  goal     value    met');
  for (const t of results.targets) {
    console.log(
      `${String(t.name).padEnd(40)}${String(t.target).padEnd(9)}${String(t.value).padEnd(9)}${t.met ? 'yes' : 'NO'}`,
    );
  }
}

try {
  await main();
} finally {
  await Promise.all(children.map((child) => child.stop()));
  await clearQueues(redisUrl).catch(() => undefined);
}
