import { z } from 'zod';
import { readActionsConfig } from '@pw/shared/actions';
import {
  actionsConfigEnv,
  commonEnv,
  envEnum,
  envInt,
  envPort,
  isProduction,
  loadConfig,
  recordTtlEnv,
  resolveSigning,
  retryEnv,
  signingEnv,
  withCommonChecks,
} from '@pw/shared/config';
import type { ActionsConfig } from '@pw/shared/actions';

/** The ingress's variables, each described: docs/configuration.md is written from them. */
export const ingressVariables = (production: boolean) => ({
  ...commonEnv,
  ...signingEnv(production),
  INGRESS_PORT: envPort(3000).meta({ description: "the ingress's listening port" }),
  INGRESS_WORKERS: envInt(1, { min: 1, max: 64 }).meta({
    description: 'ingress processes sharing the port (node:cluster)',
  }),
  INGRESS_RATE_LIMIT: envInt(0).meta({
    description:
      'requests per second per sender address (every request counts, whatever its answer), per ingress process; over it, 429. 0: off',
    default: '`0` (off)',
  }),
  MAX_BODY_BYTES: envInt(262_144, { min: 1 }).meta({ description: 'larger bodies get 413' }),
  REDIS_WAIT_REPLICAS: envInt(0, { min: 0, max: 16 }).meta({
    description:
      'replicas that must hold a webhook before it is acknowledged (Redis `WAIT` after the intake); not in time: 503, and the retry is answered as a repeat. `0`: acknowledged once the master has it (docs/operations.md → Failover)',
  }),
  // Under the ingress's 2-second command time-out, which would otherwise cut the wait short.
  REDIS_WAIT_TIMEOUT_MS: envInt(500, { min: 1, max: 1500 }).meta({
    description:
      'how long the intake waits for `REDIS_WAIT_REPLICAS` replicas (milliseconds, at most 1500)',
  }),
  DEDUP_WINDOW_SECONDS: envInt(604_800, { min: 1 }).meta({
    description:
      'how long a delivered event is remembered for deduplication; an event whose `timestamp` is older gets 422 `timestamp_out_of_range`',
    default: '`604800` (7 days)',
  }),
  MAX_CLOCK_SKEW_SECONDS: envInt(300, { min: 0 }).meta({
    description:
      "how far an event's `timestamp` may lie ahead of the ingress's clock; further gets 422 `timestamp_out_of_range`",
  }),
  INVALID_EVENTS: envEnum(['quarantine', 'reject'], 'quarantine').meta({
    description:
      'what a signed event that fails its schema gets: `quarantine` (kept, answered 202, no action; docs/webhook-api.md → Quarantine) or `reject` (422 `validation_failed`, nothing kept)',
  }),
  RECORD_TTL_SECONDS: recordTtlEnv,
  ACTIONS_CONFIG: actionsConfigEnv,
  ...retryEnv,
});

const ingressEnv = (production: boolean, actions: ActionsConfig) =>
  withCommonChecks(z.object(ingressVariables(production))).transform((env) => ({
    ...env,
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
