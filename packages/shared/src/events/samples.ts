import { randomUUID } from 'node:crypto';
import { eventDefinitionByKind } from './registry.js';
import type { EventKind } from './registry.js';

export interface SampleOptions {
  /** The new status; defaults to one that sets off the event's "always" actions only. */
  status?: string;
  /** Fixed clock, for repeatable fixtures. */
  now?: Date;
  /** Fixed suffix for the ids; a random one makes every sample a distinct event. */
  id?: string;
}

/** What a sample of one kind holds besides the members every event has. */
interface SampleParts {
  /** The entity's id and the kind's other references, before the status. */
  ids: Record<string, string>;
  /** The default new status, and the one before it. */
  status: string;
  previousStatus: string;
  /** The kind's own members, after `customer_id`. */
  details: Record<string, unknown>;
}

/** Each kind's parts, for the id suffix `id`. */
const SAMPLE_PARTS: Record<EventKind, (id: string) => SampleParts> = {
  quote: (id) => ({
    ids: { quote_id: `Q-${id}`, quote_ref_code: `QR-${id}` },
    status: 'sent',
    previousStatus: 'draft',
    details: {
      product: {
        product_id: 'P-100',
        product_name: 'Home insurance',
        price_with_taxes: '1249.90',
        currency: 'EUR',
      },
      expiry_date: '2026-12-31',
      metadata: { partner_id: 'partner-1', market: 'EU', channel: 'web' },
    },
  }),
  contract: (id) => ({
    ids: { contract_id: `K-${id}`, contract_number: `CN-${id}` },
    status: 'signed',
    previousStatus: 'pending',
    details: {
      product: { product_name: 'Home insurance', product_id: 'P-100', policy_id: `POL-${id}` },
      lifecycle_stage: 'onboarding',
      effective_date: '2026-12-01',
      expiry_date: '2027-11-30T23:59:59Z',
      metadata: { partner_id: 'partner-1', market: 'EU', activation_trigger: 'signature' },
    },
  }),
  sales: (id) => ({
    ids: { sales_id: `S-${id}` },
    status: 'negotiation',
    previousStatus: 'qualified',
    details: {
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
    },
  }),
};

/**
 * A valid, unsigned event of the given kind with distinct ids, as the partner would send it: the
 * members every event has (its type, status and previous one, timestamp and customer), in the
 * kind's order around its own parts. The status goes in the kind's status member (registry.ts).
 */
export function sampleEvent(kind: EventKind, options: SampleOptions = {}): Record<string, unknown> {
  const id = options.id ?? randomUUID().slice(0, 8);
  const { type, statusField } = eventDefinitionByKind(kind);
  const parts = SAMPLE_PARTS[kind](id);
  return {
    event_type: type,
    ...parts.ids,
    [statusField]: options.status ?? parts.status,
    previous_status: parts.previousStatus,
    timestamp: (options.now ?? new Date()).toISOString(),
    customer_id: `C-${id}`,
    ...parts.details,
  };
}
