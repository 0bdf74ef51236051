// The system the soak runs: a private Redis with its append-only file, a record store behind a
// TCP proxy (so that PostgreSQL can be made unreachable without stopping it), the sandbox in this
// process (its identity provider can be paused, its partner API told to fail), and the apps as
// `npm start` runs them, each a process of its own that a fault may kill with SIGKILL and restart:
// two ingress processes, two workers, the recorder and the dashboard.
import { startSandbox } from '@pw/sandbox';
import type { Sandbox } from '@pw/sandbox';
import {
  ChildRun,
  freePort,
  PrivateRedis,
  privateDatabase,
  startTcpProxy,
  throughProxy,
} from '@pw/test-utils';
import type { TcpProxy } from '@pw/test-utils';
import { SOAK_DASHBOARD, SOAK_WEBHOOK_SECRET } from './secrets.js';

/** The apps' `QUEUE_PREFIX` (one partition: the keys' prefix too). */
export const QUEUE_PREFIX = 'soak';

export const APP_KINDS = ['ingress', 'worker', 'recorder', 'dashboard'] as const;
export type AppKind = (typeof APP_KINDS)[number];

/** How many processes of each kind run (section 16 of the soak's docs: two ingress, two workers). */
export const COUNTS: Record<AppKind, number> = { ingress: 2, worker: 2, recorder: 1, dashboard: 1 };

/**
 * The workers' concurrency and circuit settings, set here rather than left to the defaults: the
 * bound on the partner's calls during an outage is computed from them (`outage-calls.ts`).
 */
/** The worker's partner-call time-out (`API_TIMEOUT_MS`, ms): a call answered later ends its turn. */
export const API_TIMEOUT_MS = 2000;

export const WORKER_SETTINGS = {
  WORKER_CONCURRENCY: 20,
  CIRCUIT_FAILURE_THRESHOLD: 10,
  CIRCUIT_PROBE_INTERVAL_MS: 1000,
} as const;

/**
 * The partner targets the workers call: one, as the apps run with no `ACTIONS_CONFIG` (a market
 * with its own address or client would be a target, with a circuit of its own).
 */
export const PARTNER_TARGETS = 1;

/** `ACTION_ATTEMPTS` of the apps: a dead letter has spent this many. */
export const ACTION_ATTEMPTS = 30;

/** Where each app says it is up: its health port's variable and path (its logs are at warn). */
const READY: Record<AppKind, [port: string, path: string]> = {
  ingress: ['INGRESS_PORT', '/healthz'],
  worker: ['WORKER_HEALTH_PORT', '/readyz'],
  recorder: ['RECORDER_HEALTH_PORT', '/healthz'],
  dashboard: ['DASHBOARD_PORT', '/healthz'],
};

/** Resolves once `app` answers its health check; throws if it exits or takes over 2 minutes. */
async function ready(app: App): Promise<void> {
  const [port, path] = READY[app.kind];
  const url = `http://127.0.0.1:${app.env[port]}${path}`;
  const deadline = Date.now() + 120_000;
  const up = (async () => {
    for (;;) {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) }).catch(() => null);
      if (response?.ok) return;
      if (Date.now() > deadline)
        throw new Error(`${app.kind} #${app.index + 1}: not up in 2 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  await Promise.race([up, app.run.died]);
}

export interface SoakSettings {
  /** `always` or `everysec`: Redis's `appendfsync`. */
  fsync: 'always' | 'everysec';
  /** `RECORD_TTL_SECONDS` of the apps: how long finished records stay in Redis. */
  recordTtlSeconds: number;
  /** Told where each part is as it starts. */
  log: (line: string) => void;
}

export interface App {
  kind: AppKind;
  index: number;
  run: ChildRun;
  env: Record<string, string>;
}

export interface SoakSystem {
  redis: PrivateRedis;
  sandbox: Sandbox;
  /** The line to PostgreSQL, which a fault cuts. */
  postgres: TcpProxy;
  /** The record store's connection string (through the proxy's far side: never cut). */
  storeUrl: string;
  ingressUrls: string[];
  dashboardUrl: string;
  credentials: { user: string; password: string };
  apps: App[];
  /** Kills one app with SIGKILL and starts it again with the same settings, once it is up. */
  restart(app: App): Promise<void>;
  /** Kills Redis with SIGKILL and starts it again from its append-only file. */
  restartRedis(): Promise<void>;
  stop(): Promise<void>;
}

/** What has been started so far, stopped in the reverse order, once, however often it is asked. */
export class Teardown {
  private readonly steps: (() => Promise<unknown>)[] = [];
  private running: Promise<void> | undefined;

  add(step: () => Promise<unknown>): void {
    this.steps.push(step);
  }

  /** True once `run` has been called: nothing more may start. */
  get stopping(): boolean {
    return this.running !== undefined;
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        await step().catch((error: unknown) => console.error(error));
      }
    })();
    return this.running;
  }
}

const credentials = SOAK_DASHBOARD;

/** What every app is started with. */
const appSettings = (
  settings: SoakSettings,
  redisUrl: string,
  databaseUrl: string,
  sandbox: Sandbox,
): Record<string, string> => ({
  NODE_ENV: 'development',
  LOG_LEVEL: 'warn',
  // This machine only: a long run's apps are never reachable from the network.
  LISTEN_HOST: '127.0.0.1',
  REDIS_URL: redisUrl,
  QUEUE_PREFIX,
  DATABASE_URL: databaseUrl,
  WEBHOOK_SECRETS: SOAK_WEBHOOK_SECRET,
  ACTIONS_CONFIG: '',
  ...sandbox.env,
  RECORD_TTL_SECONDS: String(settings.recordTtlSeconds),
  // Enough tries that no outage of the schedule uses them up; short, so the soak drains soon.
  ACTION_ATTEMPTS: String(ACTION_ATTEMPTS),
  ACTION_BACKOFF: 'fixed',
  ACTION_BACKOFF_DELAY_MS: '500',
  API_TIMEOUT_MS: String(API_TIMEOUT_MS),
  ...Object.fromEntries(
    Object.entries(WORKER_SETTINGS).map(([name, value]) => [name, String(value)]),
  ),
  // A killed worker's jobs are taken up again within seconds, not BullMQ's 30.
  WORKER_LOCK_MS: '5000',
  DASHBOARD_USER: credentials.user,
  DASHBOARD_PASSWORD: credentials.password,
});

/**
 * Starts the system, giving `teardown` each part as it starts: a soak interrupted while starting
 * stops what had started.
 */
export async function startSoakSystem(
  settings: SoakSettings,
  teardown: Teardown,
): Promise<SoakSystem> {
  const redis = await PrivateRedis.start({
    appendOnly: true,
    args: ['--appendfsync', settings.fsync],
  });
  teardown.add(() => redis.destroy());
  settings.log(`Redis ${redis.url}`);
  const database = await privateDatabase(`soak_${Date.now().toString(36)}`);
  teardown.add(() => database.close());
  settings.log(`record store schema ${database.schema}`);
  const target = new URL(database.url);
  const postgres = await startTcpProxy({
    host: target.hostname,
    port: Number(target.port || 5432),
  });
  teardown.add(() => postgres.close());
  // Tokens short-lived, so that an outage of the identity provider is felt within the run.
  const sandbox = await startSandbox({ accessTokenTtlSeconds: 20 });
  teardown.add(() => sandbox.stop());
  const common = appSettings(settings, redis.url, throughProxy(database.url, postgres), sandbox);
  const apps: App[] = [];
  // Each app as it runs now (a fault may have restarted it).
  teardown.add(() => Promise.all(apps.map((app) => app.run.stop('SIGTERM', 10_000))));
  for (const kind of APP_KINDS) {
    for (let index = 0; index < COUNTS[kind]; index++) {
      const env: Record<string, string> = { ...common };
      if (kind === 'ingress') env.INGRESS_PORT = String(await freePort());
      if (kind === 'worker') env.WORKER_HEALTH_PORT = String(await freePort());
      if (kind === 'recorder') env.RECORDER_HEALTH_PORT = String(await freePort());
      if (kind === 'dashboard') env.DASHBOARD_PORT = String(await freePort());
      apps.push({ kind, index, env, run: launch(kind, env) });
    }
  }
  await Promise.all(apps.map(ready));
  const local = (port: string | undefined) => `http://127.0.0.1:${port}`;
  const dashboard = apps.find((app) => app.kind === 'dashboard')!;
  return {
    redis,
    sandbox,
    postgres,
    storeUrl: database.url,
    ingressUrls: apps.filter((a) => a.kind === 'ingress').map((a) => local(a.env.INGRESS_PORT)),
    dashboardUrl: local(dashboard.env.DASHBOARD_PORT),
    credentials,
    apps,
    async restart(app) {
      await app.run.stop('SIGKILL');
      if (teardown.stopping) throw new Error('the soak is stopping');
      app.run = launch(app.kind, app.env);
      await ready(app);
    },
    async restartRedis() {
      await redis.kill();
      await redis.resume();
    },
    stop: () => teardown.run(),
  };
}

/** One app as `npm start` runs it from source. */
const launch = (kind: AppKind, env: Record<string, string>) =>
  ChildRun.tsx(`apps/${kind}/src/main.ts`, env, { name: kind, killAfterMs: 10_000 });
