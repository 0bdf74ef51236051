import { findChromium, playwrightChromium } from './chromium.js';
import { dockerReachable } from './docker.js';
import { embeddedPostgresBinary } from './embedded-postgres-binary.js';
import type { Program } from './ensure-programs.js';
import { findAllOnPath } from './find-program.js';

export interface TestProgramsOptions {
  /** The environment the tests run in: its `PATH`, `CHROMIUM_PATH`, `DATABASE_URL`. */
  env: NodeJS.ProcessEnv;
  /** How to start playwright-core's command line, as `[command, ...args]`. */
  playwrightCli: readonly [string, ...string[]];
  /** Where playwright's downloaded Chromium is. @defaultValue playwright-core's own answer */
  playwrightChromium?: () => string | undefined;
}

/** Redis's binaries: the fault and cluster tests start `redis-server`s and join them with redis-cli. */
export const REDIS_BINARIES = ['redis-server', 'redis-cli'] as const;

/** Redis's binaries, found on the `PATH` or brought by Debian's `redis-server` package. */
export const redisServerProgram = (env: NodeJS.ProcessEnv): Program => ({
  name: 'redis-server',
  find: () => findAllOnPath(REDIS_BINARIES, env.PATH),
  debianPackage: 'redis-server',
  hint: "install Debian's redis-server package as root (apt-get install redis-server), or put redis-server and redis-cli on the PATH",
});

/**
 * Every outside program `npm test` uses, in the order it makes sure of them: Chromium (the
 * dashboard's browser tests), promtool and prometheus (the alert rules' checks, a real Prometheus
 * in an end-to-end test), Redis's binaries, and, with neither `DATABASE_URL` nor a Docker engine,
 * the embedded PostgreSQL's server, which `npm ci` brings (it is only checked).
 */
export function testPrograms(options: TestProgramsOptions): Program[] {
  const { env } = options;
  const programs: Program[] = [
    {
      name: 'chromium',
      find: () => findChromium(env, options.playwrightChromium ?? playwrightChromium),
      debianPackage: 'chromium',
      npmWay: {
        line: "downloading playwright's Chromium (playwright-core install chromium)",
        command: [...options.playwrightCli, 'install', '--no-shell', '--no-progress', 'chromium'],
      },
      hint: 'install one with `apt-get install chromium` (as root), or set CHROMIUM_PATH to a Chromium or Chrome executable',
    },
    {
      name: 'prometheus',
      find: () => findAllOnPath(['promtool', 'prometheus'], env.PATH),
      debianPackage: 'prometheus',
      hint: "install Debian's prometheus package as root (apt-get install prometheus), or put promtool and prometheus on the PATH",
    },
    redisServerProgram(env),
  ];
  if (!env.DATABASE_URL && !dockerReachable(env)) {
    programs.push({
      name: 'postgresql',
      find: embeddedPostgresBinary,
      hint: `npm installed no embedded PostgreSQL for ${process.platform}-${process.arch}: set DATABASE_URL to a PostgreSQL the tests may use, or start a Docker engine`,
    });
  }
  return programs;
}
