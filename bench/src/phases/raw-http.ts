// The worker's fair baseline (docs/performance.md): a raw BullMQ Worker, in a process of its own,
// making the same partner-API call with undici to the same stand-in for the same webhooks the
// real worker drains, at the same concurrency; no token manager, no records. Its jobs are built
// from the action jobs the ingress phases queued: the same paths, the same bodies.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ACTION_SPECS } from '@pw/shared/actions';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import type { BenchRun } from '../bench-run.js';
import type { Sandbox } from '../processes.js';
import { startRawHttpWorker, whileUp } from '../processes.js';
import { redisCpuMs } from '../redis-info.js';
import type { Figures } from '../results.js';

export const RAW_QUEUE = 'raw-http';

/** `{quote_id}` in a path from the event's field of that name, as the real worker fills it. */
export const fillPath = (template: string, event: Record<string, unknown>): string =>
  template.replace(/\{(\w+)\}/g, (_, field: string) => {
    const value = event[field];
    return encodeURIComponent(typeof value === 'string' || typeof value === 'number' ? value : '');
  });

/**
 * The baseline's jobs: about as many as it runs in a phase's duration at the rate it reaches
 * here; our worker's drains are sized to as many actions (`backlogSize`).
 */
export const rawHttpJobs = (bench: BenchRun): number =>
  bench.options.quick ? 1000 : Math.max(2000, bench.options.duration * 1500);

/** `nodeArgs`: node's own options for the baseline's process (`--cpu-prof`, say). */
export async function rawHttpWorkerPhase(
  bench: BenchRun,
  sandbox: Sandbox,
  nodeArgs: string[] = [],
): Promise<Figures['raw_http_worker']> {
  bench.log('baseline: raw BullMQ worker making the same partner-API calls');
  const { redisUrl, concurrency } = bench.options;
  const connection = { url: redisUrl };
  const { prefix } = bench;
  const actions = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection,
    prefix,
    streams: QUEUE_STREAMS,
  });
  const raw = new Queue(RAW_QUEUE, { connection, prefix });
  const redis = new Redis(redisUrl);
  try {
    const { jobs, webhooks } = await rawJobsFromBacklog(actions, rawHttpJobs(bench));
    for (let i = 0; i < jobs.length; i += 1000) await raw.addBulk(jobs.slice(i, i + 1000));
    const token = await sandboxToken(sandbox.env);
    bench.ownTokenRequests++;
    const redisBefore = await redisCpuMs(redis);
    const child = await startRawHttpWorker(bench, sandbox, token, jobs.length, nodeArgs);
    await whileUp(child.printed('jobs_per_s'), child, sandbox.child);
    // From its start to its last job: a little more than the child's own window.
    const redisMs = (await redisCpuMs(redis)) - redisBefore;
    const line = /\{"jobs_per_s".*\}/.exec(child.output)?.[0] ?? '{}';
    const result = JSON.parse(line) as { jobs_per_s: number; cpu_ms_per_job: number };
    // It exits by itself after its figures: under --cpu-prof, only then is its profile written.
    if (nodeArgs.length > 0) await whileUp(child.exited, sandbox.child);
    await child.stop();
    return {
      jobs_per_s: result.jobs_per_s,
      cpu_ms_per_job: result.cpu_ms_per_job,
      redis_cpu_ms_per_job: Math.round((redisMs / Math.max(1, jobs.length)) * 1000) / 1000,
      jobs: jobs.length,
      actions_per_webhook: Math.round((jobs.length / Math.max(1, webhooks)) * 100) / 100,
      concurrency,
    };
  } finally {
    await raw.obliterate({ force: true });
    await Promise.all([raw.close(), actions.close()]);
    redis.disconnect();
  }
}

export interface RawJob {
  name: string;
  data: { method: string; path: string; body: unknown; key: string };
  opts: { jobId: string; attempts: number; removeOnComplete: { age: number } };
}

/**
 * Up to `wanted` of the baseline's jobs, one per action job waiting in `actions` (the ingress
 * queued them): the same call, path and body; with the number of webhooks they came from.
 */
export async function rawJobsFromBacklog(
  actions: Queue<ActionJobData>,
  wanted: number,
): Promise<{ jobs: RawJob[]; webhooks: number }> {
  const jobs: RawJob[] = [];
  const webhookIds = new Set<string>();
  for (let start = 0; jobs.length < wanted; start += 500) {
    const page = await actions.getWaiting(start, start + 499);
    if (page.length === 0) break;
    for (const { data } of page) {
      const { webhook_id: webhookId, action, event } = data;
      webhookIds.add(webhookId);
      const { method, path } = ACTION_SPECS[action].call;
      jobs.push({
        name: action,
        data: {
          method,
          path: fillPath(path, event),
          body: { webhook_id: webhookId, action, event },
          key: `${webhookId}:${action}`,
        },
        opts: {
          jobId: `${webhookId}.${action}`,
          attempts: 5,
          removeOnComplete: { age: 3600 },
        },
      });
    }
  }
  return { jobs, webhooks: webhookIds.size };
}

/** One access token from the sandbox's identity provider, asked for with plain fetch. */
export async function sandboxToken(env: Record<string, string>): Promise<string> {
  const url = `${env.AUTH_URL}/realms/${env.AUTH_REALM}/protocol/openid-connect/token`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: env.AUTH_CLIENT_ID ?? '',
      client_secret: env.AUTH_CLIENT_SECRET ?? '',
    }),
  });
  if (!response.ok) throw new Error(`the sandbox refused a token: ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}
