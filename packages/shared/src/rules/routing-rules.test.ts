import { describe, expect, it } from 'vitest';
import { sampleEvent } from '../events/samples.js';
import { DEFAULT_RULES, routingRulesSchema, selectActions, valueAt } from './routing-rules.js';

describe('routing rules', () => {
  it('filter on any field path with equals, in and exists, strings case-insensitively', () => {
    const rules = routingRulesSchema.parse([
      {
        event_type: 'quote.status_changed',
        action: 'notify_customer',
        when: [{ path: 'metadata.market', in: ['eu', 'ASIA'] }],
      },
      {
        event_type: 'quote.status_changed',
        action: 'lock_price',
        when: [{ path: 'product.price_with_taxes', exists: true }],
      },
      {
        event_type: 'quote.status_changed',
        action: 'update_sales_opportunity',
        when: [{ path: 'metadata.channel', equals: 'phone' }],
      },
    ]);
    expect(selectActions('quote.status_changed', sampleEvent('quote'), rules)).toEqual([
      'notify_customer',
      'lock_price',
    ]);
    const other = { ...sampleEvent('quote'), metadata: { market: 'US' }, product: {} };
    expect(selectActions('quote.status_changed', other, rules)).toEqual([]);
  });

  it('a disabled rule sets off nothing, and rules of another event type do not apply', () => {
    const rules = routingRulesSchema.parse([
      { event_type: 'contract.status_changed', action: 'generate_documents', enabled: false },
      { event_type: 'quote.status_changed', action: 'notify_customer' },
    ]);
    expect(selectActions('contract.status_changed', sampleEvent('contract'), rules)).toEqual([]);
  });

  it('refuses an action of another event type, an unknown action and unknown members', () => {
    const result = routingRulesSchema.safeParse([
      { event_type: 'quote.status_changed', action: 'start_billing' },
      { event_type: 'quote.status_changed', action: 'make_coffee' },
      { event_type: 'quote.status_changed', action: 'notify_customer', colour: 'red' },
    ]);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual([
      '0.action',
      '1.action',
      '2',
    ]);
  });

  it('the default rules follow the contract', () => {
    expect(
      selectActions(
        'contract.status_changed',
        sampleEvent('contract', { status: 'Active' }),
        DEFAULT_RULES,
      ),
    ).toEqual(['generate_documents', 'send_welcome_message', 'activate_service', 'start_billing']);
  });

  it('valueAt reads nested members and stops at missing ones', () => {
    expect(valueAt({ a: { b: { c: 1 } } }, 'a.b.c')).toBe(1);
    expect(valueAt({ a: null }, 'a.b')).toBeUndefined();
    expect(valueAt({ a: 'text' }, 'a.length')).toBeUndefined();
  });
});
