// The worker's fair baseline (docs/performance.md): a raw BullMQ Worker at the same concurrency
// whose processor makes the same partner-API call with undici, over a keep-alive pool of the same
// size, to the same stand-in, with a bearer token fetched once (no token manager, no records, no
// circuits, no logs). Run with plain node by the bench, it drains COUNT jobs from the queue
// `raw-http` and prints one JSON line: jobs/s from its first completion to its last, and its CPU
// time per job over the same window.
/* global process, console, performance, AbortSignal */
import { Worker } from 'bullmq';
import { Agent, request } from 'undici';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`raw-http-worker: ${name} is not set`);
  return value;
};
const count = Number(env('COUNT'));
const concurrency = Number(env('CONCURRENCY'));
const baseUrl = env('API_BASE_URL');
const authorization = `Bearer ${env('TOKEN')}`;
const agent = new Agent({ connections: concurrency, keepAliveTimeout: 30_000 });

let done = 0;
let firstAt = 0;
let firstCpu = process.cpuUsage();
let resolveFinished = () => undefined;
const finished = new Promise((resolve) => (resolveFinished = resolve));

const worker = new Worker(
  'raw-http',
  async (job) => {
    const { method, path, body, key } = job.data;
    const response = await request(`${baseUrl}${path}`, {
      dispatcher: agent,
      method,
      headers: {
        authorization,
        'idempotency-key': key,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw new Error(`${method} ${path} answered ${response.statusCode}`);
    }
    return { status: response.statusCode, body: text ? JSON.parse(text) : null };
  },
  { connection: { url: env('REDIS_URL') }, prefix: env('QUEUE_PREFIX'), concurrency },
);
worker.on('completed', () => {
  done++;
  if (done === 1) {
    firstAt = performance.now();
    firstCpu = process.cpuUsage();
  }
  if (done === count) resolveFinished();
});
worker.on('failed', (job, error) => console.error(`raw-http-worker: ${error.message}`));
console.log('raw-http-worker ready');
await finished;
const seconds = (performance.now() - firstAt) / 1000;
const cpu = process.cpuUsage(firstCpu);
console.log(
  JSON.stringify({
    jobs_per_s: Math.round((count - 1) / seconds),
    cpu_ms_per_job: Math.round(((cpu.user + cpu.system) / 1000 / (count - 1)) * 1000) / 1000,
  }),
);
await worker.close();
await agent.close();
process.exit(0);
