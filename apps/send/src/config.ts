import { z } from 'zod';
import {
  commonEnv,
  envPort,
  isProduction,
  loadConfig,
  resolveSigning,
  signingEnv,
} from '@pw/shared';

const sendEnv = (production: boolean) =>
  z
    .object({ ...commonEnv, ...signingEnv(production), INGRESS_PORT: envPort(3000) })
    .transform((env) => ({
      ingressPort: env.INGRESS_PORT,
      redisUrl: env.REDIS_URL,
      queuePrefix: env.QUEUE_PREFIX,
      ...resolveSigning(env),
    }));

export type SendConfig = z.output<ReturnType<typeof sendEnv>>;

export const loadSendConfig = (env: Record<string, string | undefined>): Readonly<SendConfig> =>
  loadConfig(sendEnv(isProduction(env)), env);
