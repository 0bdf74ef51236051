import { z } from 'zod';
import {
  commonEnv,
  envPort,
  isProduction,
  loadConfig,
  resolveSigning,
  signingEnv,
  withCommonChecks,
} from '@pw/shared/config';

/** `npm run send`'s variables (described where the apps define them). */
export const sendVariables = (production: boolean) => ({
  ...commonEnv,
  ...signingEnv(production),
  INGRESS_PORT: envPort(3000),
});

const sendEnv = (production: boolean) =>
  withCommonChecks(z.object(sendVariables(production))).transform((env) => ({
    ...env,
    ...resolveSigning(env),
  }));

export type SendConfig = z.output<ReturnType<typeof sendEnv>>;

export const loadSendConfig = (env: Record<string, string | undefined>): Readonly<SendConfig> =>
  loadConfig(sendEnv(isProduction(env)), env);
