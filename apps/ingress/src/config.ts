import { z } from 'zod';
import {
  commonEnv,
  envInt,
  envOptionalString,
  envPort,
  isProduction,
  loadConfig,
  readActionsConfig,
  resolveSigning,
  signingEnv,
  withCommonChecks,
} from '@pw/shared';
import type { ActionsConfig } from '@pw/shared';

const ingressEnv = (production: boolean, actions: ActionsConfig) =>
  withCommonChecks(
    z.object({
      ...commonEnv,
      ...signingEnv(production),
      INGRESS_PORT: envPort(3000),
      INGRESS_WORKERS: envInt(1, { min: 1, max: 64 }),
      INGRESS_RATE_LIMIT: envInt(0),
      MAX_BODY_BYTES: envInt(262_144, { min: 1 }),
      DEDUP_WINDOW_SECONDS: envInt(604_800, { min: 1 }),
      RECORD_TTL_SECONDS: envInt(604_800, { min: 1 }),
      ACTIONS_CONFIG: envOptionalString(),
    }),
  ).transform((env) => ({
    nodeEnv: env.NODE_ENV,
    logLevel: env.LOG_LEVEL,
    redisUrl: env.REDIS_URL,
    redisCluster: env.REDIS_CLUSTER,
    queuePrefix: env.QUEUE_PREFIX,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    port: env.INGRESS_PORT,
    /** Ingress processes sharing the port (node:cluster); 1 runs the ingress in this process. */
    workers: env.INGRESS_WORKERS,
    rateLimitPerSecond: env.INGRESS_RATE_LIMIT,
    maxBodyBytes: env.MAX_BODY_BYTES,
    dedupWindowSeconds: env.DEDUP_WINDOW_SECONDS,
    recordTtlSeconds: env.RECORD_TTL_SECONDS,
    ...resolveSigning(env),
    /** Per-action settings and the seed routing rules, from `ACTIONS_CONFIG`. */
    actions,
  }));

export type IngressConfig = z.output<ReturnType<typeof ingressEnv>>;

/** The ingress settings from the environment, validated once; throws naming every problem. */
export function loadIngressConfig(
  env: Record<string, string | undefined>,
): Readonly<IngressConfig> {
  const actions = readActionsConfig(env.ACTIONS_CONFIG || undefined);
  return loadConfig(ingressEnv(isProduction(env), actions.config), env, actions.problems);
}
