import { z } from 'zod';
import { PwError } from '../errors.js';

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

/** A `redis://` or `rediss://` address. */
export const envRedisUrl = (defaultValue: string) =>
  z.preprocess(
    unset,
    z
      .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })
      .default(defaultValue),
  );

/** `NODE_ENV=production` turns every development default into a start-up error. */
export const isProduction = (env: Record<string, string | undefined>): boolean =>
  env.NODE_ENV === 'production';

/** Variables every process reads. */
export const commonEnv = {
  NODE_ENV: envString('development'),
  LOG_LEVEL: envEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  REDIS_URL: envRedisUrl('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: z.preprocess(
    unset,
    z
      .string()
      .regex(/^[^:\s]+$/, 'must not contain ":" or spaces')
      .default('pw'),
  ),
  SHUTDOWN_GRACE_MS: envInt(10_000),
};

/** Thrown at start-up when the environment is invalid; its message lists every problem. */
export class ConfigError extends PwError {
  override name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(
      'invalid_config',
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
