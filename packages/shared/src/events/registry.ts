import type { z } from 'zod';
import { CONTRACT_EVENT, contractStatusChangedSchema } from './contract.js';
import type { ContractStatusChanged } from './contract.js';
import { QUOTE_EVENT, quoteStatusChangedSchema } from './quote.js';
import type { QuoteStatusChanged } from './quote.js';
import {
  SALES_OPPORTUNITY_EVENT,
  salesOpportunityStatusChangedSchema,
} from './sales-opportunity.js';
import type { SalesOpportunityStatusChanged } from './sales-opportunity.js';

/** Every event the partner sends, by its `event_type`. */
export const EVENT_TYPES = [QUOTE_EVENT, CONTRACT_EVENT, SALES_OPPORTUNITY_EVENT] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The payload type of each event, so handler maps can be checked for exhaustiveness. */
export interface EventPayloads {
  [QUOTE_EVENT]: QuoteStatusChanged;
  [CONTRACT_EVENT]: ContractStatusChanged;
  [SALES_OPPORTUNITY_EVENT]: SalesOpportunityStatusChanged;
}

/** Every action a webhook can set off. */
export const ACTION_NAMES = [
  'notify_customer',
  'update_sales_opportunity',
  'lock_price',
  'generate_documents',
  'send_welcome_message',
  'activate_service',
  'start_billing',
  'update_crm',
  'calculate_commission',
  'update_metrics',
  'start_follow_up_sequence',
] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

export interface EventDefinition {
  type: EventType;
  /** Short name used by `npm run send` and in logs. */
  kind: 'quote' | 'contract' | 'sales';
  /** Ingress route. */
  path: string;
  schema: z.ZodType<Record<string, unknown>>;
  /** Member holding the entity's id (`quote_id`, ...). */
  entityIdField: string;
  /** Member holding the new status (`status` or `opportunity_status`). */
  statusField: string;
  /** Actions this event can set off, in the order they are listed in the contract. */
  actions: readonly ActionName[];
}

export const EVENT_REGISTRY: Readonly<Record<EventType, EventDefinition>> = {
  [QUOTE_EVENT]: {
    type: QUOTE_EVENT,
    kind: 'quote',
    path: '/webhooks/quote-status',
    schema: quoteStatusChangedSchema,
    entityIdField: 'quote_id',
    statusField: 'status',
    actions: ['notify_customer', 'update_sales_opportunity', 'lock_price'],
  },
  [CONTRACT_EVENT]: {
    type: CONTRACT_EVENT,
    kind: 'contract',
    path: '/webhooks/contract-status',
    schema: contractStatusChangedSchema,
    entityIdField: 'contract_id',
    statusField: 'status',
    actions: ['generate_documents', 'send_welcome_message', 'activate_service', 'start_billing'],
  },
  [SALES_OPPORTUNITY_EVENT]: {
    type: SALES_OPPORTUNITY_EVENT,
    kind: 'sales',
    path: '/webhooks/sales-opportunity',
    schema: salesOpportunityStatusChangedSchema,
    entityIdField: 'sales_id',
    statusField: 'opportunity_status',
    actions: ['update_crm', 'calculate_commission', 'update_metrics', 'start_follow_up_sequence'],
  },
};

export const EVENT_KINDS = ['quote', 'contract', 'sales'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The definition for a short kind name (`quote`, `contract`, `sales`). */
export function eventDefinitionByKind(kind: EventKind): EventDefinition {
  const found = Object.values(EVENT_REGISTRY).find((definition) => definition.kind === kind);
  if (!found) throw new Error(`unknown event kind ${kind}`);
  return found;
}
