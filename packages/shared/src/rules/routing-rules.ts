import { z } from 'zod';
import { ACTION_NAMES, ACTION_SPECS } from '../actions/action-table.js';
import type { ActionName } from '../actions/action-table.js';
import { EVENT_TYPES } from '../events/registry.js';
import type { EventType } from '../events/registry.js';

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One test on a field of the event, by dotted path (`metadata.market`). */
export const conditionSchema = z.union([
  z.strictObject({ path: z.string().min(1), equals: scalar }),
  z.strictObject({ path: z.string().min(1), in: z.array(scalar).min(1) }),
  z.strictObject({ path: z.string().min(1), exists: z.boolean() }),
]);
export type Condition = z.infer<typeof conditionSchema>;

/** Sets off `action` for `event_type` when every condition holds (none: always). */
export const routingRuleSchema = z
  .strictObject({
    event_type: z.enum(EVENT_TYPES),
    action: z.enum(ACTION_NAMES),
    enabled: z.boolean().default(true),
    when: z.array(conditionSchema).default([]),
  })
  .refine((rule) => ACTION_SPECS[rule.action].eventType === rule.event_type, {
    message: 'this action does not belong to this event type',
    path: ['action'],
  });
export type RoutingRule = z.output<typeof routingRuleSchema>;

export const routingRulesSchema = z.array(routingRuleSchema);

/** The default routing rules: one per action, from the action table (docs/architecture.md). */
export const DEFAULT_RULES: readonly RoutingRule[] = routingRulesSchema.parse(
  ACTION_NAMES.map((action) => ({
    event_type: ACTION_SPECS[action].eventType,
    action,
    when: ACTION_SPECS[action].when,
  })),
);

/** Reads a dotted path (`metadata.market`) out of an event; `undefined` when any step is missing. */
export function valueAt(event: unknown, path: string): unknown {
  let current: unknown = event;
  for (const step of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, step)) {
      return undefined;
    }
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/** Strings compare case-insensitively (statuses arrive as `Approved` or `approved`). */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

function holds(condition: Condition, event: unknown): boolean {
  const value = valueAt(event, condition.path);
  if ('exists' in condition) return (value !== undefined && value !== null) === condition.exists;
  if ('in' in condition) return condition.in.some((candidate) => same(value, candidate));
  return same(value, condition.equals);
}

/** The actions an event sets off under `rules`, each once, in rule order. */
export function selectActions(
  eventType: EventType,
  event: unknown,
  rules: readonly RoutingRule[],
): ActionName[] {
  const selected = new Set<ActionName>();
  for (const rule of rules) {
    if (rule.event_type !== eventType || !rule.enabled) continue;
    if (rule.when.every((condition) => holds(condition, event))) selected.add(rule.action);
  }
  return [...selected];
}
