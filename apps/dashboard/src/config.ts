import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { readActionsConfig } from '@pw/shared/actions';
import {
  actionsConfigEnv,
  commonEnv,
  databaseUrlEnv,
  envInt,
  envOptionalString,
  envPort,
  isProduction,
  loadConfig,
  recordTtlEnv,
  retryEnv,
  withCommonChecks,
} from '@pw/shared/config';
import type { ActionsConfig } from '@pw/shared/actions';

const unsetIfEmpty = (value: unknown) => (value === '' ? undefined : value);

/** A value production requires. */
const requiredInProduction = (name: string) =>
  z.string({ error: `is required in production (${name})` });

const credential = (name: string, production: boolean) =>
  production ? z.preprocess(unsetIfEmpty, requiredInProduction(name)) : envOptionalString();

/** The shortest dashboard password production accepts. */
export const MIN_DASHBOARD_PASSWORD_LENGTH = 16;

/** Says how long a too short password is, never what it is. */
function checkPasswordLength(password: string, ctx: z.RefinementCtx): void {
  const length = [...password].length;
  if (length >= MIN_DASHBOARD_PASSWORD_LENGTH) return;
  ctx.addIssue({
    code: 'custom',
    message: `is ${length} characters long; production needs at least ${MIN_DASHBOARD_PASSWORD_LENGTH}`,
  });
}

const dashboardPassword = (production: boolean) =>
  production
    ? z.preprocess(
        unsetIfEmpty,
        requiredInProduction('basic-auth password of the dashboard').superRefine(
          checkPasswordLength,
        ),
      )
    : envOptionalString();

/** An absolute http(s) address, or unset (an empty string counts as unset). */
const envOptionalHttpUrl = () =>
  z.preprocess(
    unsetIfEmpty,
    z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) address' }).optional(),
  );

/** The dashboard's variables, each described: docs/configuration.md is written from them. */
export const dashboardVariables = (production: boolean) => ({
  ...commonEnv,
  DASHBOARD_PORT: envPort(3001).meta({ description: "the dashboard's listening port" }),
  DASHBOARD_USER: credential('basic-auth user of the dashboard', production).meta({
    description: 'basic-auth user of the dashboard and its API; required in production',
    default: 'dev: `admin`',
  }),
  DASHBOARD_PASSWORD: dashboardPassword(production).meta({
    description: 'its password; required in production, and at least 16 characters there',
    default: 'dev: a random one, printed once at start',
  }),
  RECORD_TTL_SECONDS: recordTtlEnv,
  DATABASE_URL: databaseUrlEnv(production),
  ACTIONS_CONFIG: actionsConfigEnv,
  // A released quarantined webhook's action jobs get the retry policy the ingress gives any.
  ...retryEnv,
  DASHBOARD_PUBLIC_URL: envOptionalHttpUrl().meta({
    description:
      "the dashboard's address in browsers when it is behind a proxy: its origin is then the only one whose requests may change anything",
  }),
  DASHBOARD_TRUST_PROXY: envInt(0, { min: 0, max: 10 }).meta({
    description:
      "reverse proxies in front of the dashboard whose `X-Forwarded-For` it believes (Express's `trust proxy` hop count): the failed-login limit then counts the client address N hops from the right of that header (one that is no IP address is refused). 0: the connection's address, that of the nearest proxy if there is one",
  }),
});

const dashboardEnv = (production: boolean) =>
  withCommonChecks(z.object(dashboardVariables(production)));

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
