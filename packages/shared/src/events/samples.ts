import { randomUUID } from 'node:crypto';
import { CONTRACT_EVENT } from './contract.js';
import { QUOTE_EVENT } from './quote.js';
import type { EventKind } from './registry.js';
import { SALES_OPPORTUNITY_EVENT } from './sales-opportunity.js';

export interface SampleOptions {
  /** The new status; defaults to one that sets off the event's "always" actions only. */
  status?: string;
  /** Fixed clock, for repeatable fixtures. */
  now?: Date;
  /** Fixed suffix for the ids; a random one makes every sample a distinct event. */
  id?: string;
}

/**
 * A valid, unsigned event of the given kind with distinct ids, as the partner would send it. Long
 * because it is three literal events, each readable whole; split, they would be harder to check.
 */
export function sampleEvent(kind: EventKind, options: SampleOptions = {}): Record<string, unknown> {
  const id = options.id ?? randomUUID().slice(0, 8);
  const timestamp = (options.now ?? new Date()).toISOString();
  switch (kind) {
    case 'quote':
      return {
        event_type: QUOTE_EVENT,
        quote_id: `Q-${id}`,
        quote_ref_code: `QR-${id}`,
        status: options.status ?? 'sent',
        previous_status: 'draft',
        timestamp,
        customer_id: `C-${id}`,
        product: {
          product_id: 'P-100',
          product_name: 'Home insurance',
          price_with_taxes: '1249.90',
          currency: 'EUR',
        },
        expiry_date: '2026-12-31',
        metadata: { partner_id: 'partner-1', market: 'EU', channel: 'web' },
      };
    case 'contract':
      return {
        event_type: CONTRACT_EVENT,
        contract_id: `K-${id}`,
        contract_number: `CN-${id}`,
        status: options.status ?? 'signed',
        previous_status: 'pending',
        timestamp,
        customer_id: `C-${id}`,
        product: { product_name: 'Home insurance', product_id: 'P-100', policy_id: `POL-${id}` },
        lifecycle_stage: 'onboarding',
        effective_date: '2026-12-01',
        expiry_date: '2027-11-30T23:59:59Z',
        metadata: { partner_id: 'partner-1', market: 'EU', activation_trigger: 'signature' },
      };
    case 'sales':
      return {
        event_type: SALES_OPPORTUNITY_EVENT,
        sales_id: `S-${id}`,
        opportunity_status: options.status ?? 'negotiation',
        previous_status: 'qualified',
        timestamp,
        customer_id: `C-${id}`,
        quote_ref_code: `QR-${id}`,
        conversion_details: {
          contract_id: `K-${id}`,
          conversion_value: 1249.9,
          currency: 'EUR',
          conversion_channel: 'web',
        },
        pipeline_stage: 'closing',
        sales_agent: 'agent-7',
        metadata: {
          partner_id: 'partner-1',
          campaign_source: 'newsletter',
          conversion_time_days: 12,
        },
      };
  }
}
