import { describe, expect, it } from 'vitest';
import { EVENT_REGISTRY } from '../events/registry.js';
import { DEFAULT_RULES } from '../rules/routing-rules.js';
import { ACTION_NAMES, ACTION_SPECS, actionsOf, isActionName } from './action-table.js';

describe('the action table', () => {
  it('splits each default call into a method and a path under the API base', () => {
    expect(ACTION_SPECS.update_crm.call).toEqual({
      method: 'PUT',
      path: '/crm/opportunities/{sales_id}',
    });
    for (const name of ACTION_NAMES) {
      expect(ACTION_SPECS[name].call.path).toMatch(/^\/\S*$/);
    }
  });

  it('gives every action to exactly one event type, and one default rule each', () => {
    const byEvent = Object.values(EVENT_REGISTRY).flatMap((definition) => definition.actions);
    expect([...byEvent].sort()).toEqual([...ACTION_NAMES].sort());
    expect(DEFAULT_RULES.map((rule) => rule.action)).toEqual(ACTION_NAMES);
    expect(actionsOf('quote.status_changed')).toEqual([
      'notify_customer',
      'update_sales_opportunity',
      'lock_price',
    ]);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', ''])(
    'does not take the inherited member %j for an action name',
    (name) => {
      expect(isActionName(name)).toBe(false);
    },
  );
});
