// `npm start`: ingress, worker, recorder and dashboard as child processes with readable output,
// and, outside production, a private Redis when REDIS_URL is unset and none answers on
// 127.0.0.1:6379, the sandbox (a real OpenID provider and a recording partner-API stand-in) for
// whichever of AUTH_URL and API_BASE_URL is unset, and an embedded PostgreSQL for the record store
// when DATABASE_URL is unset. Ctrl-C stops everything cleanly, and so does a start that fails.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configOrExit, loadStartConfig } from '@pw/shared/config';
import { EMBEDDED_POSTGRES_ROLE, startEmbeddedPostgres } from '@pw/shared/records';
import { readableLine } from '@pw/shared/runtime';
import { buildConsole, CONSOLE_DIST } from '../apps/dashboard/build-console.js';
import { redisForStart } from './start-redis.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const env: Record<string, string | undefined> = { ...process.env };
// Checked before anything starts: NODE_ENV=prod must not start the sandbox and the apps' defaults.
const config = configOrExit('npm start', () => loadStartConfig(env));
const production = config.NODE_ENV === 'production';
const useColour = process.stdout.isTTY;
const readable = (name: string, line: string) => readableLine(name, line, useColour);

const say = (message: string) =>
  console.log(
    readable(
      'start',
      JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: message }),
    ),
  );

/** What was started besides the apps, each stopped after them, the last started first. */
const started: (() => Promise<void>)[] = [];

async function startRedis(): Promise<void> {
  const redis = await redisForStart({
    env,
    production,
    port: config.TEST_DEFAULT_REDIS_PORT,
    dir: config.PRIVATE_REDIS_DIR ?? join(root, '.data', 'redis'),
    say,
  });
  if (!redis) return;
  started.push(() => redis.stop());
  env.REDIS_URL = redis.url;
}

async function startSandboxWhenNeeded(): Promise<void> {
  const needsAuth = !env.AUTH_URL;
  const needsApi = !env.API_BASE_URL;
  if ((!needsAuth && !needsApi) || production) return;
  say('starting the sandbox (its identity provider warns that its keys are for development only)');
  const { startSandbox } = await import('@pw/sandbox');
  const sandbox = await startSandbox({
    idpPort: config.SANDBOX_IDP_PORT,
    apiPort: config.SANDBOX_API_PORT,
    // With a real identity provider configured, the stand-in cannot check its tokens.
    verifyTokens: needsAuth,
  });
  started.push(() => sandbox.stop());
  if (needsAuth) {
    Object.assign(env, {
      AUTH_URL: sandbox.env.AUTH_URL,
      AUTH_REALM: sandbox.env.AUTH_REALM,
      AUTH_CLIENT_ID: sandbox.env.AUTH_CLIENT_ID,
      AUTH_CLIENT_SECRET: sandbox.env.AUTH_CLIENT_SECRET,
    });
    say(
      `AUTH_URL is unset: using the sandbox identity provider at ${sandbox.env.AUTH_URL} (realm ${sandbox.env.AUTH_REALM})`,
    );
  }
  if (needsApi) {
    env.API_BASE_URL = sandbox.env.API_BASE_URL;
    say(
      `API_BASE_URL is unset: using the sandbox partner API at ${sandbox.env.API_BASE_URL} (calls: ${sandbox.env.API_BASE_URL}/__sandbox/calls)`,
    );
  }
}

async function startRecordStoreWhenNeeded(): Promise<void> {
  if (env.DATABASE_URL || production) return;
  // In the checkout, kept between runs, beside the private Redis's data; checked and made so that
  // nothing another local user planted is used (startEmbeddedPostgres).
  const port = config.EMBEDDED_POSTGRES_PORT;
  say(`DATABASE_URL is unset: starting an embedded PostgreSQL for the record store (port ${port})`);
  const embedded = await startEmbeddedPostgres({
    dataDir: config.EMBEDDED_POSTGRES_DIR ?? join(root, '.data', 'postgres'),
    port,
  });
  started.push(() => embedded.stop());
  say(
    embedded.kept
      ? `its data is in ${embedded.dataDir}, kept between runs`
      : `its data is in ${embedded.dataDir} for this run only: run as root, PostgreSQL runs as the user postgres, which cannot reach the checkout (set EMBEDDED_POSTGRES_DIR to a folder it can reach to keep it)`,
  );
  // The password is made up for this run and reaches the apps only in their environment.
  env.DATABASE_URL = embedded.url;
  say(
    `the apps connect to it as ${EMBEDDED_POSTGRES_ROLE} (not a superuser) with a password made up for this run; its superuser only through the socket in ${embedded.socketDir} (psql -h ${embedded.socketDir} -p ${port} -U postgres ${EMBEDDED_POSTGRES_ROLE})`,
  );
}

const children = new Map<string, ChildProcess>();
let stopping = false;

/**
 * With an OTLP endpoint set, each app is started with the tracing bootstrap, which must load before
 * the app's own imports (docs/operations.md#tracing); without one, nothing of it.
 */
const tracing =
  env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    ? ['--import', join(root, 'packages/shared/tracing/register.mjs')]
    : [];

function run(name: string, entry: string): ChildProcess {
  // `node --import tsx`: one process per app, so signals reach the app itself.
  const child = spawn(process.execPath, ['--import', 'tsx', ...tracing, entry], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => console.log(readable(name, line)));
  }
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      say(`${name} exited unexpectedly (${signal ?? `code ${code}`}): stopping the rest`);
      void stop(1);
    }
  });
  children.set(name, child);
  return child;
}

/** Stops the apps, then what was started for them, the last first; then exits. */
async function stop(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  // A start under way finishes its step first, so that what it starts is stopped too.
  await starting.catch(() => undefined);
  const anything = children.size > 0 || started.length > 0;
  const exits = [...children.values()].map((child) => once(child, 'exit'));
  for (const child of children.values()) child.kill('SIGTERM');
  await Promise.all(exits);
  for (const stopOne of started.reverse()) {
    await stopOne().catch((error: unknown) => say(`could not stop cleanly: ${String(error)}`));
  }
  // A start that stopped before starting anything has said all there is to say.
  if (anything) say('stopped');
  process.exit(exitCode);
}

async function startAll(): Promise<void> {
  for (const step of [startRedis, startSandboxWhenNeeded, startRecordStoreWhenNeeded]) {
    await step();
    if (stopping) return;
  }
  // The operator console's bundle, which the dashboard serves at `/` (under a second).
  await buildConsole(join(root, CONSOLE_DIST));
  if (stopping) return;
  run('ingress', 'apps/ingress/src/main.ts');
  run('worker', 'apps/worker/src/main.ts');
  run('recorder', 'apps/recorder/src/main.ts');
  run('dashboard', 'apps/dashboard/src/main.ts');
  const dashboard = `http://127.0.0.1:${env.DASHBOARD_PORT || 3001}`;
  say(
    `console: ${dashboard}/  queue board: ${dashboard}/admin/queues  API docs: ${dashboard}/docs/`,
  );
  say(`try: npm run send -- quote --status approved --wait`);
}

// From the first moment: a Ctrl-C while the Redis or the PostgreSQL starts stops them too.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => void stop(0));
}
const starting = startAll();
starting.catch((error: unknown) => {
  say(`could not start: ${error instanceof Error ? error.message : String(error)}`);
  void stop(1);
});
