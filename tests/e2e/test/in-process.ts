// The whole system in the test's own process, as `npm start` runs it in four: the sandbox, then
// the ingress, the worker, the recorder and the dashboard from their `run*` functions on the
// environment `npm start` would give them. Their log lines are collected in `npm start`'s readable
// form, so a test reads them as it would read `npm start`'s output.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { buildConsole, CONSOLE_DIST } from '@pw/dashboard/build-console';
import { loadDashboardConfig } from '@pw/dashboard/config';
import { runDashboard } from '@pw/dashboard/run';
import { loadIngressConfig } from '@pw/ingress/config';
import { runIngress } from '@pw/ingress/run';
import { loadRecorderConfig } from '@pw/recorder/config';
import { runRecorder } from '@pw/recorder/run';
import { startSandbox } from '@pw/sandbox';
import { runSend } from '@pw/send/run';
import { loadWorkerConfig } from '@pw/worker/config';
import { runWorker } from '@pw/worker/run';
import { createLogger, readableLine } from '@pw/shared/runtime';
import type { Logger, OnFatal, RunningProcess } from '@pw/shared/runtime';
import { repoRoot } from '@pw/test-utils';

/** What the system printed, in `npm start`'s readable form, and a way to wait for a line. */
export class SystemOutput {
  output = '';
  private readonly waiting: { text: string; times: number; resolve: () => void }[] = [];

  /** A pino destination whose lines are added as `name`'s. */
  destination(name: string) {
    return {
      write: (chunk: string) => {
        for (const line of chunk.split('\n').filter(Boolean)) {
          this.add(`${readableLine(name, line, false)}\n`);
        }
      },
    };
  }

  add(text: string): void {
    this.output += text;
    for (const wait of this.waiting.filter((w) => this.count(w.text) >= w.times)) wait.resolve();
  }

  /** How many times `text` appears in the output so far. */
  count(text: string): number {
    return this.output.split(text).length - 1;
  }

  /** Resolves once `text` has been printed `times` times. */
  printed(text: string, times = 1): Promise<void> {
    if (this.count(text) >= times) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ text, times, resolve }));
  }
}

/** The console's bundle, built once per test process (npm start builds it at every start). */
let consoleBuilt: Promise<void> | undefined;

export interface InProcessApps {
  output: SystemOutput;
  /** The environment the apps were started with (the sandbox's settings added). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

type Run = (log: Logger, fatal: OnFatal) => RunningProcess | Promise<RunningProcess>;

/**
 * Starts the sandbox for whichever of `AUTH_URL` and `API_BASE_URL` is unset (as `npm start`
 * does), then the four apps on `extra` over the test process's environment. A fatal condition of
 * an app (its port taken, say) fails the start, or is printed afterwards.
 */
export async function startInProcess(extra: Record<string, string>): Promise<InProcessApps> {
  const output = new SystemOutput();
  const env: Record<string, string> = { ...extra };
  const stops: (() => Promise<void>)[] = [];
  let failed: (error: Error) => void = () => undefined;
  const fatalSeen = new Promise<never>((_, reject) => (failed = reject));
  fatalSeen.catch(() => undefined);
  const stop = async () => {
    for (const stopOne of stops.reverse()) await stopOne().catch(() => undefined);
  };
  const start = async (name: string, run: Run) => {
    const log = createLogger({
      name,
      level: env.LOG_LEVEL ?? 'info',
      destination: output.destination(name),
    });
    const fatal: OnFatal = (message, fields = {}) => {
      log.fatal(fields, message);
      failed(new Error(`${name}: ${message}`));
    };
    const running = await Promise.race([run(log, fatal), fatalSeen]);
    stops.push(() => running.stop('SIGTERM'));
  };
  try {
    stops.push(await sandboxFor(env));
    consoleBuilt ??= buildConsole(join(repoRoot, CONSOLE_DIST));
    await consoleBuilt;
    const appEnv = { ...process.env, ...env };
    await Promise.all([
      start('ingress', (log, fatal) => runIngress(loadIngressConfig(appEnv), log, fatal)),
      start('worker', (log, fatal) => runWorker(loadWorkerConfig(appEnv), log, fatal)),
      start('recorder', async (log, fatal) => {
        const recorder = runRecorder(loadRecorderConfig(appEnv), log, fatal);
        await Promise.race([recorder.started, fatalSeen]).catch(async (error: unknown) => {
          await recorder.stop('SIGTERM');
          throw error;
        });
        return recorder;
      }),
      start('dashboard', (log, fatal) => runDashboard(loadDashboardConfig(appEnv), log, fatal)),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { output, env, stop };
}

/** The sandbox for whichever of `AUTH_URL` and `API_BASE_URL` is unset; its settings in `env`. */
async function sandboxFor(env: Record<string, string>): Promise<() => Promise<void>> {
  const needsAuth = !env.AUTH_URL;
  const needsApi = !env.API_BASE_URL;
  if (!needsAuth && !needsApi) return () => Promise.resolve();
  const sandbox = await startSandbox({
    idpPort: Number(env.SANDBOX_IDP_PORT ?? 0),
    apiPort: Number(env.SANDBOX_API_PORT ?? 0),
    // With a real identity provider configured, the stand-in cannot check its tokens.
    verifyTokens: needsAuth,
  });
  const { API_BASE_URL, ...auth } = sandbox.env;
  if (needsAuth) Object.assign(env, auth);
  if (needsApi) env.API_BASE_URL = API_BASE_URL;
  return () => sandbox.stop();
}

/** `npm run send -- …args` run in this process: its exit code and what it printed. */
export async function sendInProcess(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; output: string }> {
  let stdout = '';
  let output = '';
  const stream = (isStdout: boolean) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (isStdout) stdout += chunk.toString();
        output += chunk.toString();
        done();
      },
    });
  const code = await runSend(
    args,
    { ...process.env, ...env },
    {
      stdout: stream(true),
      stderr: stream(false),
    },
  );
  return { code, stdout, output };
}
