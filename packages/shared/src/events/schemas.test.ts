import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, EVENT_REGISTRY, eventDefinitionByKind } from './registry.js';
import { sampleEvent } from './samples.js';
import { acknowledgementSchema } from './acknowledgement.js';

const issuesOf = (kind: (typeof EVENT_KINDS)[number], event: unknown) => {
  const result = eventDefinitionByKind(kind).schema.safeParse(event);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
};

describe('event samples', () => {
  it.each(EVENT_KINDS)('a valid signed %s sample passes, unknown members kept', (kind) => {
    const event = { ...sampleEvent(kind), signature: 'sha256=00', extra: { a: 1 } };
    const parsed = eventDefinitionByKind(kind).schema.parse(event);
    expect(parsed).toEqual(event);
  });

  it('every registered event has an entity id and status in its sample', () => {
    for (const definition of Object.values(EVENT_REGISTRY)) {
      const event = sampleEvent(definition.kind);
      expect(event.event_type).toBe(definition.type);
      expect(typeof event[definition.entityIdField]).toBe('string');
      expect(typeof event[definition.statusField]).toBe('string');
    }
  });
});

describe('event schemas', () => {
  it('names the path of each wrong field', () => {
    const quote: Record<string, unknown> = {
      ...sampleEvent('quote'),
      signature: 'x',
      product: { price_with_taxes: '12.500' },
      timestamp: '2026-11-21',
    };
    delete quote.customer_id;
    expect(issuesOf('quote', quote).sort()).toEqual([
      'customer_id',
      'product.price_with_taxes',
      'timestamp',
    ]);
  });

  it('timestamp needs a zone; expiry_date takes a date or a date-time', () => {
    const base = { ...sampleEvent('contract'), signature: 'x' };
    expect(issuesOf('contract', { ...base, timestamp: '2026-11-21T10:00:00+05:30' })).toEqual([]);
    expect(issuesOf('contract', { ...base, timestamp: '2026-11-21T10:00:00' })).toEqual([
      'timestamp',
    ]);
    expect(issuesOf('contract', { ...base, expiry_date: '2027-01-01' })).toEqual([]);
    expect(issuesOf('contract', { ...base, expiry_date: '2027-01-01T00:00:00Z' })).toEqual([]);
    expect(issuesOf('contract', { ...base, expiry_date: 'next year' })).toEqual(['expiry_date']);
  });

  it('identifiers are 1-256 characters (code points) with no control characters', () => {
    const base = { ...sampleEvent('quote'), signature: 'x' };
    expect(issuesOf('quote', { ...base, quote_id: 'q'.repeat(256) })).toEqual([]);
    expect(issuesOf('quote', { ...base, quote_id: '😀'.repeat(256) })).toEqual([]);
    expect(issuesOf('quote', { ...base, quote_id: 'q'.repeat(257) })).toEqual(['quote_id']);
    expect(issuesOf('quote', { ...base, customer_id: 'c\u0007' })).toEqual(['customer_id']);
    expect(issuesOf('quote', { ...base, quote_ref_code: '' })).toEqual(['quote_ref_code']);
    const contract = { ...sampleEvent('contract'), signature: 'x' };
    expect(
      issuesOf('contract', {
        ...contract,
        contract_number: 'n'.repeat(300),
        product: { product_id: 'p\u0085', policy_id: 'p'.repeat(257) },
        metadata: { partner_id: 'x\n' },
      }).sort(),
    ).toEqual([
      'contract_number',
      'metadata.partner_id',
      'product.policy_id',
      'product.product_id',
    ]);
    const sales = { ...sampleEvent('sales'), signature: 'x' };
    expect(
      issuesOf('sales', { ...sales, sales_id: 's'.repeat(2700), sales_agent: 'a\r' }).sort(),
    ).toEqual(['sales_agent', 'sales_id']);
  });

  it('no string anywhere may hold U+0000, unknown members and keys included', () => {
    const base = { ...sampleEvent('quote'), signature: 'x' };
    expect(issuesOf('quote', { ...base, status: 'appro\u0000ved' })).toEqual(['status']);
    expect(issuesOf('quote', { ...base, note: ['ok', { deep: 'x\u0000' }] })).toEqual([
      'note.1.deep',
    ]);
    expect(issuesOf('quote', { ...base, extra: { 'key\u0000': 1 } })).toEqual(['extra.key\u0000']);
    // Other control characters are fine outside identifiers: free text may hold a newline.
    expect(issuesOf('quote', { ...base, note: 'line 1\nline 2' })).toEqual([]);
  });
});

describe('acknowledgements', () => {
  it('the acknowledgement schema matches what the ingress sends', () => {
    expect(
      acknowledgementSchema.safeParse({
        received: true,
        processed_at: '2026-11-21T10:00:00.000Z',
        webhook_id: 'wh_abcdefghijklmnopqrstuv',
        actions_triggered: ['notify_customer'],
      }).success,
    ).toBe(true);
  });
});
