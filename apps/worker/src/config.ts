import { z } from 'zod';
import {
  commonEnv,
  envEnum,
  envInt,
  envOptionalString,
  envPort,
  envString,
  isLoopbackUrl,
  isProduction,
  loadConfig,
  readActionsConfig,
  withCommonChecks,
} from '@pw/shared';
import type { ActionsConfig, ClientCredentials } from '@pw/shared';

const SANDBOX_HINT = '(npm start starts a sandbox for it outside production)';

/** An `https://` address; plain `http://` only for loopback hosts or outside production. */
const serviceUrl = (name: string, production: boolean) =>
  z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .url({ protocol: /^https?$/, error: `is required: the ${name} address ${SANDBOX_HINT}` })
      .refine(
        (url) => !production || url.startsWith('https:') || isLoopbackUrl(url),
        'must be https:// in production (plain http only for loopback addresses)',
      ),
  );

const required = (name: string) =>
  z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string({ error: `is required ${name}` }),
  );

const workerEnv = (production: boolean) =>
  withCommonChecks(
    z.object({
      ...commonEnv,
      WORKER_CONCURRENCY: envInt(20, { min: 1, max: 1000 }),
      WORKER_HEALTH_PORT: envPort(3002),
      WORKER_LOCK_MS: envInt(30_000, { min: 1000 }),
      AUTH_URL: serviceUrl('identity provider', production),
      AUTH_REALM: required(SANDBOX_HINT),
      AUTH_CLIENT_ID: required(SANDBOX_HINT),
      AUTH_CLIENT_SECRET: required(SANDBOX_HINT),
      AUTH_SCOPE: envString('openid'),
      API_BASE_URL: serviceUrl('partner API', production),
      API_TIMEOUT_MS: envInt(10_000, { min: 100 }),
      ACTIONS_CONFIG: envOptionalString(),
      ACTION_ATTEMPTS: envInt(8, { min: 1, max: 100 }),
      ACTION_BACKOFF: envEnum(['fixed', 'exponential'], 'exponential'),
      ACTION_BACKOFF_DELAY_MS: envInt(1000),
      RECORD_TTL_SECONDS: envInt(604_800, { min: 1 }),
    }),
  );

/** Where one event's calls go: the API and the credentials for its token. */
export interface PartnerTarget {
  baseUrl: string;
  credentials: ClientCredentials;
}

export interface WorkerConfig extends z.output<ReturnType<typeof workerEnv>> {
  actions: ActionsConfig;
  /** The default target, and one per `metadata.market` from `ACTIONS_CONFIG`. */
  targets: { fallback: PartnerTarget; byMarket: Readonly<Record<string, PartnerTarget>> };
}

/** The worker settings from the environment and `ACTIONS_CONFIG`, validated once. */
export function loadWorkerConfig(env: Record<string, string | undefined>): Readonly<WorkerConfig> {
  const actions = readActionsConfig(env.ACTIONS_CONFIG || undefined);
  const problems = [...actions.problems];
  for (const [market, target] of Object.entries(actions.config.markets)) {
    if (!env[target.client_secret_env]) {
      problems.push(
        `ACTIONS_CONFIG markets.${market}: environment variable ${target.client_secret_env} is not set`,
      );
    }
  }
  const base = loadConfig(workerEnv(isProduction(env)), env, problems);
  const fallback: PartnerTarget = {
    baseUrl: base.API_BASE_URL,
    credentials: {
      authUrl: base.AUTH_URL,
      realm: base.AUTH_REALM,
      clientId: base.AUTH_CLIENT_ID,
      clientSecret: base.AUTH_CLIENT_SECRET,
      scope: base.AUTH_SCOPE,
    },
  };
  const byMarket = Object.fromEntries(
    Object.entries(actions.config.markets).map(([market, target]) => [
      market.toLowerCase(),
      {
        baseUrl: target.api_base_url ?? fallback.baseUrl,
        credentials: {
          authUrl: target.auth_url ?? fallback.credentials.authUrl,
          realm: target.realm,
          clientId: target.client_id,
          clientSecret: env[target.client_secret_env] ?? '',
          scope: base.AUTH_SCOPE,
        },
      },
    ]),
  );
  return Object.freeze({ ...base, actions: actions.config, targets: { fallback, byMarket } });
}
