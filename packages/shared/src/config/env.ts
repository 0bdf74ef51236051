import { isIP } from 'node:net';
import { z } from 'zod';
import { PwError } from '../errors.js';
import { hasHashTag, parseRedisUrl } from '../redis.js';
import { MAX_QUEUE_PARTITIONS } from '../queue/partitions.js';
import type { FailureCode } from '../errors.js';

/** Empty strings count as unset, so `FOO= npm start` means "use the default". */
const unset = (value: unknown): unknown => (value === '' ? undefined : value);

/** An integer variable with a default and bounds. */
export function envInt(defaultValue: number, bounds: { min?: number; max?: number } = {}) {
  return z.preprocess(
    unset,
    z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(bounds.min ?? 0)
      .max(bounds.max ?? Number.MAX_SAFE_INTEGER)
      .default(defaultValue),
  );
}

/** A TCP port number. */
export const envPort = (defaultValue: number) => envInt(defaultValue, { min: 1, max: 65535 });

/** One of a fixed set of words. */
export function envEnum<const T extends readonly [string, ...string[]]>(
  values: T,
  defaultValue: T[number],
) {
  return z.preprocess(unset, z.enum(values).default(defaultValue));
}

/** Free text with a default. */
export const envString = (defaultValue: string) =>
  z.preprocess(unset, z.string().default(defaultValue));

/** Free text without a default (absent stays `undefined`). */
export const envOptionalString = () => z.preprocess(unset, z.string().optional());

/** Splits a comma-separated value; blank items are dropped, and an empty list counts as unset. */
function splitList(value: unknown): unknown {
  const text = unset(value);
  if (typeof text !== 'string') return text;
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

/** A comma-separated list; absent stays `undefined`. */
export const envList = () => z.preprocess(splitList, z.array(z.string()).optional());

/** A comma-separated list that must be given; `message` says why when it is not. */
export const envRequiredList = (message: string) =>
  z.preprocess(splitList, z.array(z.string(), { error: message }));

/** `true` or `false`. */
export const envBoolean = (defaultValue: boolean) =>
  z.preprocess(
    unset,
    z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .transform((value) => value === 'true')
      .default(defaultValue),
  );

/**
 * A `redis://` or `rediss://` address; for a Redis Cluster, several `host:port` seeds may follow
 * the scheme, comma-separated (`redis://10.0.0.1:7000,10.0.0.2:7000`).
 */
export const envRedisUrl = (defaultValue: string) =>
  z.preprocess(
    unset,
    z
      .string()
      .superRefine((url, ctx) => {
        try {
          parseRedisUrl(url);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      })
      .default(defaultValue),
  );

/**
 * `NODE_ENV=production` turns every development default into a start-up error. Matched without
 * regard to case or surrounding spaces: `Production` must not quietly run the development defaults.
 * Says which schema to check the environment with; `nodeEnv` then refuses any other spelling.
 */
export const isProduction = (env: Record<string, string | undefined>): boolean =>
  env.NODE_ENV?.trim().toLowerCase() === 'production';

/** The values of `NODE_ENV`, in any letter case. */
export const NODE_ENVS = ['development', 'test', 'production'] as const;

/**
 * `NODE_ENV`, lower-cased. Any other value is an error: a typo (`prod`) must not run the
 * development defaults as if nothing were set.
 */
export const nodeEnv = z
  .preprocess(
    (value) => (typeof value === 'string' ? unset(value.trim().toLowerCase()) : value),
    z
      .enum(NODE_ENVS, { error: 'must be development, test or production (any letter case)' })
      .default('development'),
  )
  .meta({
    description:
      '`development`, `test` or `production`, in any letter case; `production` turns every development default into a start-up error, and any other value stops the start (`npm start` too)',
  });

/** Where the apps look for Redis when `REDIS_URL` is unset. */
export const DEFAULT_REDIS = { host: '127.0.0.1', port: 6379 } as const;
export const DEFAULT_REDIS_URL = `redis://${DEFAULT_REDIS.host}:${DEFAULT_REDIS.port}`;

/** Variables every process reads; check them together with `withCommonChecks`. */
export const commonEnv = {
  NODE_ENV: nodeEnv,
  LISTEN_HOST: z
    .preprocess(
      unset,
      z
        .string()
        .refine((value) => isIP(value) !== 0, 'must be an IP address, such as 127.0.0.1')
        .optional(),
    )
    .meta({
      description:
        "the address the process's servers listen on (the ingress, the dashboard, the health ports); unset: every interface. `127.0.0.1` keeps them to this machine (the soak's system)",
    }),
  LOG_LEVEL: envEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info').meta({
    description: 'pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  }),
  REDIS_URL: envRedisUrl(DEFAULT_REDIS_URL).meta({
    description: 'Redis for queues and records: `redis://` or `rediss://`',
  }),
  /** `true`: `REDIS_URL` names seed nodes of a Redis Cluster. */
  REDIS_CLUSTER: envBoolean(false).meta({
    description:
      '`true`: `REDIS_URL` names seed nodes of a Redis Cluster, comma-separated after the scheme (`redis://10.0.0.1:7000,10.0.0.2:7000`); `QUEUE_PREFIX` must then be a hash tag such as `{pw}`',
  }),
  QUEUE_PREFIX: z
    .preprocess(
      unset,
      z
        .string()
        .regex(/^[^:\s]+$/, 'must not contain ":" or spaces')
        .default('pw'),
    )
    .meta({
      description: 'prefix of every Redis key (no `:` or spaces); `{pw}` for Redis Cluster',
    }),
  QUEUE_PARTITIONS: envInt(1, { min: 1, max: MAX_QUEUE_PARTITIONS }).meta({
    description:
      'how many partitions the queues, streams and per-webhook state are split into, each under a hash tag of its own; the first process stores it, and a process with another count refuses to start: only `npm run partitions -- N` changes it (docs/operations.md → Changing the partition count)',
  }),
  SHUTDOWN_GRACE_MS: envInt(10_000).meta({
    description: 'how long shutdown waits for requests and jobs in flight (milliseconds)',
  }),
};

/** `RECORD_TTL_SECONDS`: the ingress, the worker, the recorder and the dashboard read it. */
export const recordTtlEnv = envInt(3600, { min: 1 }).meta({
  description:
    'how long finished jobs, and hot outcome records once the record store has them finished, stay in Redis (seconds); the record store keeps the history, and dead letters stay at least 7 days',
  default: '`3600` (1 hour)',
});

const databaseUrl = () =>
  z
    .string({
      error:
        'is required: the record store, a PostgreSQL connection string (npm start starts an embedded one outside production)',
    })
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string');

const DATABASE_URL_META = {
  description:
    'the record store: a PostgreSQL connection string (`postgres://...`); required in production',
  default: 'embedded under `npm start`',
};

/**
 * `DATABASE_URL`: the record store. The recorder always needs it (`requiredDatabaseUrlEnv`), the
 * dashboard in production (`npm start` starts an embedded PostgreSQL without it).
 */
export const databaseUrlEnv = (required: boolean) =>
  z.preprocess(unset, required ? databaseUrl() : databaseUrl().optional()).meta(DATABASE_URL_META);

export const requiredDatabaseUrlEnv = z.preprocess(unset, databaseUrl()).meta(DATABASE_URL_META);

/** `RECORD_RETENTION_DAYS`: how long the record store keeps history. */
export const recordRetentionEnv = envInt(90, { min: 1 }).meta({
  description: 'days the record store keeps webhook records, attempt history and the audit log',
});

/**
 * The default retry policy of an action. Stamped on each action job when it is added: by the
 * ingress's intake, and by the dashboard when an operator releases a quarantined webhook.
 */
export const retryEnv = {
  ACTION_ATTEMPTS: envInt(8, { min: 1, max: 100 }).meta({
    description: 'tries per action, the first included',
  }),
  ACTION_BACKOFF: envEnum(['fixed', 'exponential'], 'exponential').meta({
    description: '`exponential` (with jitter) or `fixed`',
  }),
  ACTION_BACKOFF_DELAY_MS: envInt(1000).meta({
    description: 'first retry delay (milliseconds)',
  }),
};

/** The retry policy the variables of `retryEnv` describe. */
export const retryPolicy = (env: {
  ACTION_ATTEMPTS: number;
  ACTION_BACKOFF: 'fixed' | 'exponential';
  ACTION_BACKOFF_DELAY_MS: number;
}) => ({
  attempts: env.ACTION_ATTEMPTS,
  backoff: { type: env.ACTION_BACKOFF, delay_ms: env.ACTION_BACKOFF_DELAY_MS },
});

/** `ACTIONS_CONFIG`: the path of the routing and per-action settings file. */
export const actionsConfigEnv = envOptionalString().meta({
  description:
    'path of a JSON or YAML file of routing rules and per-action settings (see `ACTIONS_CONFIG` below)',
  default: 'built-in rules and calls',
});

interface RedisEnv {
  REDIS_URL: string;
  REDIS_CLUSTER: boolean;
  QUEUE_PREFIX: string;
}

const REDIS_VARIABLES: readonly PropertyKey[] = ['REDIS_URL', 'REDIS_CLUSTER', 'QUEUE_PREFIX'];

/** The rules between the Redis variables, which no single variable's schema can see. */
function checkRedisEnv(env: RedisEnv, ctx: z.RefinementCtx): void {
  const { nodes, db } = parseRedisUrl(env.REDIS_URL);
  if (!env.REDIS_CLUSTER) {
    if (nodes.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_URL'],
        message: 'names several nodes: set REDIS_CLUSTER=true for a Redis Cluster',
      });
    }
    return;
  }
  if (!hasHashTag(env.QUEUE_PREFIX)) {
    ctx.addIssue({
      code: 'custom',
      path: ['QUEUE_PREFIX'],
      message: `must be a hash tag such as {${env.QUEUE_PREFIX}} with REDIS_CLUSTER=true: BullMQ's scripts need all of a queue's keys in one hash slot`,
    });
  }
  if (db !== 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_URL'],
      message: 'cannot name a database with REDIS_CLUSTER=true (a cluster has only database 0)',
    });
  }
}

/**
 * Adds the checks between `commonEnv`'s Redis variables to an app's schema. They run even when
 * other variables are invalid (so every problem is listed at once), unless a Redis variable is.
 */
export function withCommonChecks<T extends z.ZodType<RedisEnv>>(schema: T): T {
  return schema.superRefine((env, ctx) => checkRedisEnv(env, ctx), {
    when: ({ issues }) => !issues.some((issue) => REDIS_VARIABLES.includes(issue.path?.[0] ?? '')),
  });
}

/** The code of a `ConfigError`. */
export const INVALID_CONFIG = 'invalid_config' satisfies FailureCode;

/** Thrown at start-up when the environment is invalid; its message lists every problem. */
export class ConfigError extends PwError<typeof INVALID_CONFIG> {
  override name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(
      INVALID_CONFIG,
      `Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.problems = problems;
  }
}

/**
 * Parses the environment once and freezes the result; throws a ConfigError naming every problem,
 * `otherProblems` (found in files the environment points at) included.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
  otherProblems: readonly string[] = [],
): Readonly<z.output<S>> {
  const result = schema.safeParse(env);
  const problems = result.success
    ? []
    : result.error.issues.map(
        (issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`,
      );
  problems.push(...otherProblems);
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(result.data);
}

/** Runs a config loader at start-up; on a ConfigError prints its one message and exits 1. */
export function configOrExit<T>(app: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${app}: ${error.message}\n`);
    process.exit(1);
  }
}
