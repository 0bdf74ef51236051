import { z } from 'zod';
import { DEFAULT_REDIS, envOptionalString, envPort, loadConfig, nodeEnv } from './env.js';

/**
 * What `npm start` (scripts/start.ts) reads itself, besides the apps' variables, each described:
 * docs/configuration.md is written from them.
 */
export const startVariables = {
  SANDBOX_IDP_PORT: envPort(3010).meta({ description: "the sandbox identity provider's port" }),
  SANDBOX_API_PORT: envPort(3011).meta({ description: "the sandbox partner API's port" }),
  EMBEDDED_POSTGRES_PORT: envPort(3020).meta({
    description: "the embedded PostgreSQL's port, when `DATABASE_URL` is unset outside production",
  }),
  EMBEDDED_POSTGRES_DIR: envOptionalString().meta({
    description:
      "the embedded PostgreSQL's data folder (kept between runs): a real folder this user made (never a link), in a folder nobody else can write into",
    default: '`.data/postgres` in the checkout',
  }),
  PRIVATE_REDIS_DIR: envOptionalString().meta({
    description: `npm start's private Redis's data folder (its append-only file, kept between runs), when \`REDIS_URL\` is unset outside production and no Redis answers on ${DEFAULT_REDIS.host}:${DEFAULT_REDIS.port}`,
    default: '`.data/redis` in the checkout',
  }),
  TEST_DEFAULT_REDIS_PORT: envPort(DEFAULT_REDIS.port).meta({
    description: `for tests only: the port npm start takes for the apps' default Redis address (${DEFAULT_REDIS.host}:${DEFAULT_REDIS.port}), where, with \`REDIS_URL\` unset, it uses the Redis that answers or else starts its private one; a test points it at a free port when the machine's own Redis holds the real one`,
  }),
};

const startEnv = z.object({ NODE_ENV: nodeEnv, ...startVariables });

export type StartConfig = z.output<typeof startEnv>;

/** `npm start`'s settings, checked before it starts anything; throws naming every problem. */
export const loadStartConfig = (env: Record<string, string | undefined>): Readonly<StartConfig> =>
  loadConfig(startEnv, env);
