import { invalidArgument } from '../errors.js';
import type { z } from 'zod';
import { actionsOf } from '../actions/action-table.js';
import type { ActionName } from '../actions/action-table.js';
import { CONTRACT_EVENT, contractEvent } from './contract.js';
import type { ContractStatusChanged } from './contract.js';
import { QUOTE_EVENT, quoteEvent } from './quote.js';
import type { QuoteStatusChanged } from './quote.js';
import { SALES_OPPORTUNITY_EVENT, salesOpportunityEvent } from './sales-opportunity.js';
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
  /** Actions this event can set off, in the order of the action table. */
  actions: readonly ActionName[];
}

export const EVENT_REGISTRY: Readonly<Record<EventType, EventDefinition>> = {
  [QUOTE_EVENT]: {
    ...quoteEvent,
    kind: 'quote',
    path: '/webhooks/quote-status',
    actions: actionsOf(QUOTE_EVENT),
  },
  [CONTRACT_EVENT]: {
    ...contractEvent,
    kind: 'contract',
    path: '/webhooks/contract-status',
    actions: actionsOf(CONTRACT_EVENT),
  },
  [SALES_OPPORTUNITY_EVENT]: {
    ...salesOpportunityEvent,
    kind: 'sales',
    path: '/webhooks/sales-opportunity',
    actions: actionsOf(SALES_OPPORTUNITY_EVENT),
  },
};

export const EVENT_KINDS = ['quote', 'contract', 'sales'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The definition for a short kind name (`quote`, `contract`, `sales`). */
export function eventDefinitionByKind(kind: EventKind): EventDefinition {
  const found = Object.values(EVENT_REGISTRY).find((definition) => definition.kind === kind);
  if (!found) throw invalidArgument(`unknown event kind ${kind}`);
  return found;
}
