// npm start's Redis: `REDIS_URL` when set (or in production), else the Redis answering on the
// apps' default address, else a private one started there (packages/test-utils/src/local-redis.ts).
import { DEFAULT_REDIS } from '@pw/shared/config';
import { findOnPath } from '@pw/test-utils/find-program';
import { LOCAL_REDIS_WAYS, LocalRedisError, startLocalRedis } from '@pw/test-utils/local-redis';
import type { LocalRedis } from '@pw/test-utils/local-redis';
import { planLocalRedis } from '@pw/test-utils/local-redis-plan';
import { dockerAnswers } from '@pw/test-utils/redis-container';
import { redisAnswers } from '@pw/test-utils/redis-probe';
import { canUseAptGet, runQuietly } from '@pw/test-utils/run-command';

export const REDIS_INSTALL_HINT =
  'install redis-server (Debian: apt-get install redis-server; macOS: brew install redis), start a Docker engine, or set REDIS_URL';

export interface StartRedisOptions {
  env: Record<string, string | undefined>;
  production: boolean;
  /** The default address's port: 6379, or a test's. */
  port: number;
  /** The private Redis's data folder. */
  dir: string;
  say: (line: string) => void;
}

/**
 * The Redis the apps are to use, and how to stop it when npm start started it; undefined when
 * they use the `REDIS_URL` given. Throws, with one line saying what to install, when no Redis
 * answers on the default address and none can be started there.
 */
export async function redisForStart(options: StartRedisOptions): Promise<LocalRedis | undefined> {
  const { env, port, dir, say } = options;
  const address = `${DEFAULT_REDIS.host}:${port}`;
  const run = runQuietly(env);
  const plan = await planLocalRedis({
    redisUrl: env.REDIS_URL,
    production: options.production,
    defaultAnswers: () => redisAnswers(DEFAULT_REDIS.host, port),
    redisServerOnPath: () => findOnPath('redis-server', env.PATH) !== undefined,
    canUseApt: () => canUseAptGet(process.getuid?.(), run),
    dockerAnswers: () => dockerAnswers(),
  });
  if (plan.kind === 'given') return undefined;
  const url = `redis://${address}`;
  if (plan.kind === 'default') {
    say(`REDIS_URL is unset: using the Redis on ${address}`);
    return { url, stop: () => Promise.resolve() };
  }
  const nothing = `REDIS_URL is unset and nothing answers on ${address}`;
  const [first] = plan.ways;
  if (!first) {
    throw new Error(
      `${nothing}, and there is no redis-server on the PATH, no apt-get as root and no Docker engine: ${REDIS_INSTALL_HINT}`,
    );
  }
  say(
    `${nothing}: starting a private Redis there (${LOCAL_REDIS_WAYS[first]}, append-only file in ${dir}), stopped when npm start stops`,
  );
  try {
    return await startLocalRedis(plan.ways, { port, dir, run, say });
  } catch (error) {
    if (!(error instanceof LocalRedisError)) throw error;
    throw new Error(`${nothing}, and ${error.message}: ${REDIS_INSTALL_HINT}`, { cause: error });
  }
}
