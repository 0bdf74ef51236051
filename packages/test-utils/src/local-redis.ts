import { AptGet } from './ensure-programs.js';
import type { LocalRedisWay } from './local-redis-plan.js';
import { REDIS_IMAGE, dockerCli, startRedisContainer } from './redis-container.js';
import { redisAnswers } from './redis-probe.js';
import type { DockerCli } from './redis-container.js';
import { PrivateRedis } from './redis-server.js';
import type { RunCommand } from './run-command.js';

/** npm start's own Redis: where it listens, and how to stop it. */
export interface LocalRedis {
  url: string;
  stop(): Promise<void>;
}

export interface LocalRedisOptions {
  /** Its port on 127.0.0.1. */
  port: number;
  /** Its data folder (the append-only file), kept between runs. */
  dir: string;
  /** Runs apt-get for the `apt-get` way. */
  run: RunCommand;
  /** @defaultValue the real `docker` command */
  docker?: DockerCli;
  /** `uid:gid` a container runs as. @defaultValue this process's */
  user?: string;
  say: (line: string) => void;
}

/** No way of starting npm start's own Redis worked; `failures` says why, one per way tried. */
export class LocalRedisError extends Error {
  override name = 'LocalRedisError';

  constructor(readonly failures: readonly string[]) {
    super(`no private Redis could be started (${failures.join('; ') || 'no way to start one'})`);
  }
}

/** An error's message on one line: its first line and, when longer, its last. */
function oneLine(error: unknown): string {
  const lines = String(error instanceof Error ? error.message : error)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.length > 1 ? `${lines[0]} ${lines.at(-1)}` : (lines[0] ?? 'failed');
}

async function redisServer(options: LocalRedisOptions): Promise<LocalRedis> {
  const { port, dir } = options;
  // Its own process group: a terminal's Ctrl-C reaches npm start, which stops it after the apps.
  const redis = await PrivateRedis.start({ port, dir, appendOnly: true, detached: true });
  return { url: redis.url, stop: () => redis.stop() };
}

async function aptThenRedisServer(options: LocalRedisOptions): Promise<LocalRedis> {
  options.say(
    "redis-server is not on the PATH: installing Debian's redis-server package (apt-get install redis-server)",
  );
  const failed = new AptGet(options.run).install('redis-server');
  if (failed !== undefined) throw new Error(`apt-get install redis-server: ${failed}`);
  // Where systemd runs, the package starts its own service on 127.0.0.1:6379.
  if (await redisAnswers('127.0.0.1', options.port)) {
    options.say(`Debian's redis-server service answers on 127.0.0.1:${options.port}: using it`);
    return { url: `redis://127.0.0.1:${options.port}`, stop: () => Promise.resolve() };
  }
  return redisServer(options);
}

async function container(options: LocalRedisOptions): Promise<LocalRedis> {
  const user = options.user ?? `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
  const { port, dir } = options;
  return startRedisContainer({ port, dir, user }, options.docker ?? dockerCli);
}

/** How each way runs Redis, for the lines that say so. */
export const LOCAL_REDIS_WAYS: Record<LocalRedisWay, string> = {
  'redis-server': 'redis-server',
  'apt-get': "Debian's redis-server",
  docker: `a ${REDIS_IMAGE} container`,
};

const WAYS: Record<LocalRedisWay, (options: LocalRedisOptions) => Promise<LocalRedis>> = {
  'redis-server': redisServer,
  'apt-get': aptThenRedisServer,
  docker: container,
};

/**
 * Starts npm start's own Redis on 127.0.0.1:`port`, with the append-only file on and its data
 * in `dir`, by the first of `ways` that works; throws a LocalRedisError naming why each failed.
 */
export async function startLocalRedis(
  ways: readonly LocalRedisWay[],
  options: LocalRedisOptions,
): Promise<LocalRedis> {
  const failures: string[] = [];
  for (const way of ways) {
    if (failures.length > 0) {
      options.say(`the private Redis: ${failures.at(-1)}; trying ${LOCAL_REDIS_WAYS[way]}`);
    }
    try {
      return await WAYS[way](options);
    } catch (error) {
      failures.push(`${way} failed: ${oneLine(error)}`);
    }
  }
  throw new LocalRedisError(failures);
}
