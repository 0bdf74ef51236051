import { z } from 'zod';
import { readActionsConfig } from '@pw/shared/actions';
import { isLoopbackUrl } from '@pw/shared/auth';
import {
  actionsConfigEnv,
  commonEnv,
  envInt,
  envOptionalString,
  envPort,
  envString,
  isProduction,
  loadConfig,
  recordTtlEnv,
  withCommonChecks,
} from '@pw/shared/config';
import { Partitions } from '@pw/shared/queue';
import type { ActionsConfig } from '@pw/shared/actions';
import type { ClientCredentials } from '@pw/shared/auth';
import { marketTable } from './market-table.js';
import type { MarketTable } from './market-table.js';

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

/** The worker's variables, each described: docs/configuration.md is written from them. */
export const workerVariables = (production: boolean) => ({
  ...commonEnv,
  WORKER_CONCURRENCY: envInt(20, { min: 1, max: 1000 }).meta({
    description: 'action jobs at once per worker process',
  }),
  WORKER_PARTITIONS: envOptionalString().meta({
    description:
      'the queue partitions this process takes jobs from, as partitions and ranges (`0-3,7`); `WORKER_CONCURRENCY` stays its total of jobs at once',
    default: 'every partition',
  }),
  WORKER_HEALTH_PORT: envPort(3002).meta({
    description: "the worker's `/healthz` and `/metrics` port",
  }),
  WORKER_LOCK_MS: envInt(30_000, { min: 1000 }).meta({
    description: "job lock (milliseconds); a dead worker's jobs are taken over once it expires",
  }),
  AUTH_URL: serviceUrl('identity provider', production).meta({
    description: 'identity provider host; `https://` in production unless loopback',
    default: 'sandbox under `npm start`',
  }),
  AUTH_REALM: required(SANDBOX_HINT).meta({
    description: "the identity provider's realm",
    default: 'sandbox under `npm start`',
  }),
  AUTH_CLIENT_ID: required(SANDBOX_HINT).meta({
    description: 'client id for the client-credentials grant',
    default: 'sandbox under `npm start`',
  }),
  AUTH_CLIENT_SECRET: required(SANDBOX_HINT).meta({
    description: 'client secret (never logged)',
    default: 'sandbox under `npm start`',
  }),
  AUTH_SCOPE: envString('openid').meta({ description: 'scope asked for' }),
  API_BASE_URL: serviceUrl('partner API', production).meta({
    description: 'partner API base address; `https://` in production unless loopback',
    default: 'sandbox under `npm start`',
  }),
  API_TIMEOUT_MS: envInt(10_000, { min: 100 }).meta({
    description: 'time-out of one partner-API call (milliseconds)',
  }),
  ACTIONS_CONFIG: actionsConfigEnv,
  CIRCUIT_FAILURE_THRESHOLD: envInt(10, { min: 1, max: 10_000 }).meta({
    description:
      "different actions failing in a row with a retryable failure (network, 408, 429, 5xx, identity provider unreachable), no 2xx between, that open one partner target's circuit (an action failing again counts once; a poison input not at all)",
  }),
  CIRCUIT_PROBE_INTERVAL_MS: envInt(5000, { min: 10 }).meta({
    description:
      'time between probe calls to a target whose circuit is open (milliseconds; each wait up to 40% longer, never shorter, so workers do not probe in step)',
  }),
  RECORD_TTL_SECONDS: recordTtlEnv,
});

const workerEnv = (production: boolean) =>
  withCommonChecks(z.object(workerVariables(production))).transform((env, ctx) => {
    const partitions = new Partitions(env.QUEUE_PREFIX, env.QUEUE_PARTITIONS);
    const chosen = partitions.select(env.WORKER_PARTITIONS);
    if (typeof chosen === 'string') {
      ctx.addIssue({ code: 'custom', path: ['WORKER_PARTITIONS'], message: chosen });
      return z.NEVER;
    }
    /** The partitions this worker takes jobs from. */
    return { ...env, partitions, workerPartitions: chosen };
  });

/** Where one event's calls go: the API and the credentials for its token. */
export interface PartnerTarget {
  baseUrl: string;
  credentials: ClientCredentials;
}

/** The targets are made once, at start: so are their circuits' names (asked for on every try). */
const circuitNames = new WeakMap<PartnerTarget, string>();

/**
 * The name of a target's circuit (and its metric label): the API base address and the
 * realm/client the token is for. Markets sharing both share one circuit.
 */
export function circuitTarget(target: PartnerTarget): string {
  let name = circuitNames.get(target);
  if (name === undefined) {
    name = `${target.baseUrl.replace(/\/+$/, '')} ${target.credentials.realm}/${target.credentials.clientId}`;
    circuitNames.set(target, name);
  }
  return name;
}

export interface WorkerConfig extends z.output<ReturnType<typeof workerEnv>> {
  actions: ActionsConfig;
  /** The default target, and one per `metadata.market` from `ACTIONS_CONFIG`. */
  targets: { fallback: PartnerTarget; byMarket: MarketTable<PartnerTarget> };
}

/** The worker settings from the environment and `ACTIONS_CONFIG`, validated once. */
export function loadWorkerConfig(env: Record<string, string | undefined>): Readonly<WorkerConfig> {
  const actions = readActionsConfig(env.ACTIONS_CONFIG || undefined);
  const problems = [...actions.problems];
  const production = isProduction(env);
  for (const [market, target] of Object.entries(actions.config.markets)) {
    if (!env[target.client_secret_env]) {
      problems.push(
        `ACTIONS_CONFIG markets.${market}: environment variable ${target.client_secret_env} is not set`,
      );
    }
    // The same rule as AUTH_URL and API_BASE_URL: a market's token and calls travel over TLS.
    for (const field of ['auth_url', 'api_base_url'] as const) {
      const url = target[field];
      if (production && url && !url.startsWith('https:') && !isLoopbackUrl(url)) {
        problems.push(
          `ACTIONS_CONFIG markets.${market}.${field}: must be https:// in production (plain http only for loopback addresses)`,
        );
      }
    }
  }
  const base = loadConfig(workerEnv(production), env, problems);
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
  const byMarket = marketTable(
    Object.fromEntries(
      Object.entries(actions.config.markets).map(([market, target]) => [
        market,
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
    ),
  );
  return Object.freeze({ ...base, actions: actions.config, targets: { fallback, byMarket } });
}
