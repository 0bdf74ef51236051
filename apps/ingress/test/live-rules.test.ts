// The ingress's live routing rules (live-rules.ts, as main.ts wires them) over a real Redis: a
// change the dashboard stores reaches the next request, and the rules in force are worked out once
// per load or change of the rules, never per request.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actionsConfigSchema, effectiveRules } from '@pw/shared/actions';
import { acknowledgementSchema, eventDefinitionByKind } from '@pw/shared/events';
import { DEFAULT_RULES, routingRulesSchema, RulesStore } from '@pw/shared/rules';
import { createLogger } from '@pw/shared/runtime';
import type { ActionsConfig } from '@pw/shared/actions';
import type { RoutingRule } from '@pw/shared/rules';
import { signedEvent } from '@pw/test-utils';
import { liveRoutingRules } from '../src/live-rules.js';
import type { LiveRoutingRules } from '../src/live-rules.js';
import { postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

/** ACTIONS_CONFIG turns update_metrics off: it never runs, whatever the stored rules say. */
const ACTIONS: ActionsConfig = actionsConfigSchema.parse({
  actions: { update_metrics: { enabled: false } },
});
/** What a converted sales opportunity sets off under the built-in rules, update_metrics off. */
const BUILT_IN = ['update_crm', 'calculate_commission'];

/** Rules as the dashboard stores them: update_metrics among them, still off by ACTIONS_CONFIG. */
const CHANGED = routingRulesSchema.parse([
  { event_type: 'sales_opportunity.status_changed', action: 'update_crm' },
  { event_type: 'sales_opportunity.status_changed', action: 'update_metrics' },
  { event_type: 'sales_opportunity.status_changed', action: 'start_follow_up_sequence' },
]);
const UNDER_CHANGED = ['update_crm', 'start_follow_up_sequence'];

let harness: Harness;
let live: LiveRoutingRules;
/** The stored rules each working out of the rules in force was given, in order. */
let computed: (readonly RoutingRule[] | undefined)[];
/** The ingress's warning lines. */
let warnings: string[];

beforeEach(async () => {
  computed = [];
  warnings = [];
  const destination = { write: (line: string) => void warnings.push(line) };
  const log = createLogger({ name: 'ingress-test', level: 'warn', destination });
  const counting = (config: ActionsConfig) => {
    computed.push(config.rules);
    return effectiveRules(config);
  };
  harness = await startHarness({
    rulesSource: (redis, prefix) => {
      live = liveRoutingRules(redis, { queuePrefix: prefix, actions: ACTIONS }, log, counting);
      return live.rules;
    },
  });
  await live.started;
  expect(warnings).toEqual([]);
});
afterEach(async () => {
  live.subscriber.disconnect();
  await harness.close();
});

const store = () =>
  new RulesStore(harness.inspect, { queuePrefix: harness.prefix, seed: DEFAULT_RULES });

/** The actions a new converted sales opportunity sets off now. */
async function actionsNow(): Promise<string[]> {
  const event = signedEvent('sales', { status: 'converted' });
  const response = await postJson(harness.app, eventDefinitionByKind('sales').path, event);
  return acknowledgementSchema.parse(response.body).actions_triggered;
}

/** Stores `rules` as the dashboard does and waits until this ingress has worked them out. */
async function replaceRules(rules: RoutingRule[]): Promise<void> {
  const loads = computed.length;
  await store().replace(rules, 'operator');
  await expect.poll(() => computed.length).toBe(loads + 1);
  expect(computed.at(-1)).toEqual(rules);
}

describe('live routing rules', () => {
  it('requests read the rules in force as they are: none works them out again', async () => {
    const loads = computed.length;
    const inForce = live.rules.current();
    for (let i = 0; i < 5; i++) expect(await actionsNow()).toEqual(BUILT_IN);
    expect(computed).toHaveLength(loads);
    expect(live.rules.current()).toBe(inForce);
  });

  it('a change reaches the next request, worked out once for every request after it', async () => {
    const before = live.rules.current();
    expect(await actionsNow()).toEqual(BUILT_IN);
    await replaceRules(CHANGED);
    const loads = computed.length;
    const inForce = live.rules.current();
    expect(inForce).not.toBe(before);
    for (let i = 0; i < 5; i++) expect(await actionsNow()).toEqual(UNDER_CHANGED);
    expect(computed).toHaveLength(loads);
    expect(live.rules.current()).toBe(inForce);
  });

  it('stored rules that do not parse leave the last known in force; absent ones, the seed', async () => {
    await replaceRules(CHANGED);
    const loads = computed.length;
    const inForce = live.rules.current();
    const { key, channel } = store();
    const invalid = { rules: [{ event_type: 'nope' }], updated_at: null, updated_by: null };
    await harness.inspect.set(key, JSON.stringify(invalid));
    await harness.inspect.publish(channel, 'invalid');
    await expect.poll(() => warnings.join('')).toContain('cannot read the routing rules');
    expect(computed).toHaveLength(loads);
    expect(live.rules.current()).toBe(inForce);
    expect(await actionsNow()).toEqual(UNDER_CHANGED);

    // Absent: the seed (ACTIONS_CONFIG's rules, else the built-in ones) is stored and in force.
    await harness.inspect.del(key);
    await harness.inspect.publish(channel, 'absent');
    await expect.poll(() => computed.length).toBe(loads + 1);
    expect(computed.at(-1)).toEqual(DEFAULT_RULES);
    expect((await store().read()).rules).toEqual(DEFAULT_RULES);
    expect(await actionsNow()).toEqual(BUILT_IN);
  });
});
