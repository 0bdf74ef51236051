import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ACTION_NAMES, HTTP_METHODS } from './action-table.js';
import { DEFAULT_RULES, routingRulesSchema } from '../rules/routing-rules.js';
import type { RoutingRule } from '../rules/routing-rules.js';

const backoffSchema = z.strictObject({
  type: z.enum(['fixed', 'exponential']),
  delay_ms: z.int().min(0),
});

/** Per-action settings; anything left out falls back to the built-in call and the env policy. */
export const actionSettingsSchema = z.strictObject({
  method: z.enum(HTTP_METHODS).optional(),
  /** Path under the API base, with `{field.path}` placeholders filled from the event. */
  path: z.string().startsWith('/').optional(),
  enabled: z.boolean().optional(),
  attempts: z.int().min(1).max(100).optional(),
  backoff: backoffSchema.optional(),
  /** At most `max` calls started per `duration_ms`, counted over every worker process. */
  rate_limit: z.strictObject({ max: z.int().min(1), duration_ms: z.int().min(1) }).optional(),
  /** At most this many calls in flight at once, counted over every worker process. */
  max_concurrent: z.int().min(1).optional(),
  /**
   * Skip the call when a newer event for the same entity has been taken in (out-of-order
   * delivery). Defaults to true for the actions that change the partner's state.
   */
  skip_when_stale: z.boolean().optional(),
});
export type ActionSettings = z.infer<typeof actionSettingsSchema>;

/** Credentials and API of one market (`metadata.market`), for partners with a realm per region. */
export const marketTargetSchema = z.strictObject({
  auth_url: z.url({ protocol: /^https?$/ }).optional(),
  realm: z.string().min(1),
  client_id: z.string().min(1),
  /** Name of the environment variable that holds the client secret (never the secret itself). */
  client_secret_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable'),
  api_base_url: z.url({ protocol: /^https?$/ }).optional(),
});
export type MarketTarget = z.infer<typeof marketTargetSchema>;

export const actionsConfigSchema = z.strictObject({
  actions: z.partialRecord(z.enum(ACTION_NAMES), actionSettingsSchema).default({}),
  rules: routingRulesSchema.optional(),
  commission: z
    .strictObject({
      /** Rate when no market rate applies. @defaultValue 0.05 */
      default_rate: z.number().min(0).max(1).default(0.05),
      /** Rate by `metadata.market`. */
      rates_by_market: z.record(z.string(), z.number().min(0).max(1)).default({}),
    })
    .default({ default_rate: 0.05, rates_by_market: {} }),
  markets: z.record(z.string(), marketTargetSchema).default({}),
});
export type ActionsConfig = z.output<typeof actionsConfigSchema>;

export const DEFAULT_ACTIONS_CONFIG: ActionsConfig = actionsConfigSchema.parse({});

/** Reads `ACTIONS_CONFIG` (JSON or YAML by extension); returns the problems instead of throwing. */
export function readActionsConfig(path: string | undefined): {
  config: ActionsConfig;
  problems: string[];
} {
  if (!path) return { config: DEFAULT_ACTIONS_CONFIG, problems: [] };
  let raw: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    raw = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    return {
      config: DEFAULT_ACTIONS_CONFIG,
      problems: [`ACTIONS_CONFIG: cannot read ${path}: ${(error as Error).message}`],
    };
  }
  const result = actionsConfigSchema.safeParse(raw ?? {});
  if (!result.success) {
    return {
      config: DEFAULT_ACTIONS_CONFIG,
      problems: result.error.issues.map(
        (issue) => `ACTIONS_CONFIG ${issue.path.join('.') || '(file)'}: ${issue.message}`,
      ),
    };
  }
  return { config: result.data, problems: [] };
}

/** The routing rules in force: the file's, else the built-in ones; disabled actions never run. */
export function effectiveRules(config: ActionsConfig): RoutingRule[] {
  const rules = config.rules ?? DEFAULT_RULES;
  return rules.map((rule) =>
    config.actions[rule.action]?.enabled === false ? { ...rule, enabled: false } : rule,
  );
}
