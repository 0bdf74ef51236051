import { Redis } from 'ioredis';
import { OutcomeStore } from '@pw/shared/outcomes';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  testRedisUrl,
  testSchema,
  uniquePrefix,
} from '@pw/test-utils';
import type { TestSchema } from '@pw/test-utils';
import { sendInProcess, startInProcess } from './in-process.js';

/** What the system printed, in `npm start`'s readable form. */
export interface PrintedOutput {
  output: string;
  /** Resolves once `text` has been printed `times` times. */
  printed(text: string, times?: number): Promise<void>;
}

export interface RunningSystem<Run extends PrintedOutput = PrintedOutput> {
  run: Run;
  env: Record<string, string>;
  url: { ingress: string; dashboard: string; api: string; worker: string; recorder: string };
  /** `npm run send -- …args`: its exit code and the JSON lines it printed. */
  send(...args: string[]): Promise<{ code: number | null; lines: unknown[]; output: string }>;
  /** The webhook's outcome as soon as `condition` holds (woken by the outcome store's changes). */
  outcome(
    webhookId: string,
    condition: (outcome: WebhookOutcome) => boolean,
  ): Promise<WebhookOutcome>;
  /** A call to the dashboard's operator API with the system's credentials. */
  dashboard(path: string, init?: RequestInit): Promise<Response>;
  /**
   * The dashboard's JSON answer at `path` once `condition` holds for it (the record store is
   * written a moment after Redis), asked again every 100 ms for up to 30 s.
   */
  poll<T>(path: string, condition: (body: T) => boolean): Promise<T>;
  stop(): Promise<void>;
}

/**
 * The whole system in this process (docs/development.md#tests), with nothing configured but free
 * ports, a queue prefix of its own and, unless `DATABASE_URL` is given in `extra`, a schema of
 * its own in the test run's PostgreSQL for the record store.
 */
export async function startSystem(extra: Record<string, string> = {}): Promise<RunningSystem> {
  const prefix = uniquePrefix();
  const schema: TestSchema | undefined = 'DATABASE_URL' in extra ? undefined : await testSchema();
  const apps = await startInProcess(await systemEnv(prefix, schema, extra)).catch(
    async (error: unknown) => {
      await schema?.drop();
      throw error;
    },
  );
  return systemClient(prefix, schema, apps.env, {
    run: apps.output,
    stop: () => apps.stop(),
    async send(args) {
      const { code, stdout, output } = await sendInProcess(args, apps.env);
      return { code, stdout, output };
    },
  });
}

/**
 * `npm start` itself, as a child process, for the tests of `npm start` and of what only a process
 * of its own shows (tracing's start-up hook); otherwise as `startSystem`.
 */
export async function startNpmStart(
  extra: Record<string, string> = {},
): Promise<RunningSystem<ChildRun>> {
  const prefix = uniquePrefix();
  const schema: TestSchema | undefined = 'DATABASE_URL' in extra ? undefined : await testSchema();
  const env = await systemEnv(prefix, schema, extra);
  const run = ChildRun.tsx('scripts/start.ts', env);
  await Promise.all(
    ['ingress listening', 'worker running', 'recorder running', 'dashboard listening'].map((text) =>
      run.printed(text),
    ),
  );
  return systemClient(prefix, schema, env, {
    run,
    stop: () => run.stop('SIGKILL').then(() => undefined),
    async send(args) {
      const send = ChildRun.start(['npm', 'run', '-s', 'send', '--', ...args], env);
      const code = await send.exited;
      return { code, stdout: send.output, output: send.output };
    },
  });
}

/** The test's handles on a started system: `apps` runs it, the rest is the same for both starts. */
function systemClient<Run extends PrintedOutput>(
  prefix: string,
  schema: TestSchema | undefined,
  env: Record<string, string>,
  apps: {
    run: Run;
    stop(): Promise<void>;
    send(args: string[]): Promise<{ code: number | null; stdout: string; output: string }>;
  },
): RunningSystem<Run> {
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  const subscriber = redis.duplicate();
  const outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 600 });
  const local = (port: string | undefined) => `http://127.0.0.1:${port}`;
  const authorization = `Basic ${Buffer.from(`${env.DASHBOARD_USER}:${env.DASHBOARD_PASSWORD}`).toString('base64')}`;
  const dashboard = (path: string, init: RequestInit = {}) =>
    fetch(`${local(env.DASHBOARD_PORT)}${path}`, {
      ...init,
      headers: { authorization, ...(init.headers as Record<string, string> | undefined) },
    });
  return {
    run: apps.run,
    env,
    url: {
      ingress: local(env.INGRESS_PORT),
      dashboard: local(env.DASHBOARD_PORT),
      api: local(env.SANDBOX_API_PORT),
      worker: local(env.WORKER_HEALTH_PORT),
      recorder: local(env.RECORDER_HEALTH_PORT),
    },
    async send(...args) {
      const { code, stdout, output } = await apps.send(args);
      const lines = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as unknown);
      return { code, lines, output };
    },
    dashboard,
    poll: <T>(path: string, condition: (body: T) => boolean) =>
      pollUntil(dashboard, path, condition),
    outcome: (webhookId, condition) =>
      outcomes.waitUntil(webhookId, subscriber, condition, { timeoutMs: 20_000 }),
    async stop() {
      await apps.stop();
      subscriber.disconnect();
      redis.disconnect();
      const cleaner = newTestRedis();
      await deleteKeys(cleaner, prefix);
      cleaner.disconnect();
      await schema?.drop();
    },
  };
}

/** npm start's environment: free ports, the queue prefix, the record store's schema, then `extra`. */
export async function systemEnv(
  prefix: string,
  schema: TestSchema | undefined,
  extra: Record<string, string>,
): Promise<Record<string, string>> {
  return {
    ...(schema ? { DATABASE_URL: withSchema(schema) } : {}),
    RECORDER_HEALTH_PORT: String(await freePort()),
    DASHBOARD_USER: 'operator',
    DASHBOARD_PASSWORD: 'e2e-dashboard-password',
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    INGRESS_PORT: String(await freePort()),
    DASHBOARD_PORT: String(await freePort()),
    WORKER_HEALTH_PORT: String(await freePort()),
    SANDBOX_IDP_PORT: String(await freePort()),
    SANDBOX_API_PORT: String(await freePort()),
    AUTH_URL: '',
    API_BASE_URL: '',
    WEBHOOK_SECRETS: '',
    NODE_ENV: 'development',
    ...extra,
  };
}

/** The dashboard's JSON answer at `path` once `condition` holds, asked every 100 ms for up to 30 s. */
async function pollUntil<T>(
  dashboard: (path: string) => Promise<Response>,
  path: string,
  condition: (body: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const response = await dashboard(path);
    const body = (await response.json()) as T;
    if (response.ok && condition(body)) return body;
    if (Date.now() > deadline) {
      throw new Error(`${path}: not as awaited in 30 s: ${JSON.stringify(body).slice(0, 2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The schema's connection string: its `search_path` set by the connection's options. */
export const withSchema = ({ databaseUrl, schema }: TestSchema): string =>
  // Spelt out: URLSearchParams would write the space as `+`, which pg reads as a `+`.
  `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
