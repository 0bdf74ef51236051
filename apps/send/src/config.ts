import { z } from 'zod';
import {
  commonEnv,
  envPort,
  isProduction,
  loadConfig,
  resolveSigning,
  signingEnv,
  withCommonChecks,
} from '@pw/shared';

const sendEnv = (production: boolean) =>
  withCommonChecks(
    z.object({ ...commonEnv, ...signingEnv(production), INGRESS_PORT: envPort(3000) }),
  ).transform((env) => ({
    ingressPort: env.INGRESS_PORT,
    redisUrl: env.REDIS_URL,
    redisCluster: env.REDIS_CLUSTER,
    queuePrefix: env.QUEUE_PREFIX,
    ...resolveSigning(env),
  }));

export type SendConfig = z.output<ReturnType<typeof sendEnv>>;

export const loadSendConfig = (env: Record<string, string | undefined>): Readonly<SendConfig> =>
  loadConfig(sendEnv(isProduction(env)), env);
