import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  commonEnv,
  envInt,
  envOptionalString,
  envPort,
  isProduction,
  loadConfig,
  readActionsConfig,
  withCommonChecks,
} from '@pw/shared';
import type { ActionsConfig } from '@pw/shared';

const credential = (name: string, production: boolean) =>
  production
    ? z.preprocess(
        (value) => (value === '' ? undefined : value),
        z.string({ error: `is required in production (${name})` }),
      )
    : envOptionalString();

const dashboardEnv = (production: boolean) =>
  withCommonChecks(
    z.object({
      ...commonEnv,
      DASHBOARD_PORT: envPort(3001),
      DASHBOARD_USER: credential('basic-auth user of the dashboard', production),
      DASHBOARD_PASSWORD: credential('basic-auth password of the dashboard', production),
      RECORD_TTL_SECONDS: envInt(604_800, { min: 1 }),
      ACTIONS_CONFIG: envOptionalString(),
    }),
  );

export interface DashboardConfig extends z.output<ReturnType<typeof dashboardEnv>> {
  user: string;
  password: string;
  /** True when the password was made up at start (development): print it once. */
  generatedPassword: boolean;
  actions: ActionsConfig;
}

/** The dashboard settings, validated once; outside production, `admin` and a random password. */
export function loadDashboardConfig(
  env: Record<string, string | undefined>,
): Readonly<DashboardConfig> {
  const actions = readActionsConfig(env.ACTIONS_CONFIG || undefined);
  const base = loadConfig(dashboardEnv(isProduction(env)), env, actions.problems);
  const password = base.DASHBOARD_PASSWORD ?? randomBytes(12).toString('base64url');
  return Object.freeze({
    ...base,
    user: base.DASHBOARD_USER ?? 'admin',
    password,
    generatedPassword: base.DASHBOARD_PASSWORD === undefined,
    actions: actions.config,
  });
}
