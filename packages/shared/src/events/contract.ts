import { z } from 'zod';
import { dateOrDateTime, identifier } from './fields.js';
import { statusChangedEvent } from './status-changed-event.js';

export const CONTRACT_EVENT = 'contract.status_changed';

/** `POST /webhooks/contract-status`. */
export const contractEvent = statusChangedEvent({
  type: CONTRACT_EVENT,
  entityIdField: 'contract_id',
  references: { contract_number: identifier.optional() },
  statusField: 'status',
  fields: {
    product: z
      .looseObject({
        product_name: z.string().optional(),
        product_id: identifier.optional(),
        policy_id: identifier.optional(),
      })
      .optional(),
    lifecycle_stage: z.string().optional(),
    effective_date: dateOrDateTime.optional(),
    expiry_date: dateOrDateTime.optional(),
  },
  metadata: { market: z.string().optional(), activation_trigger: z.string().optional() },
});

export const contractStatusChangedSchema = contractEvent.schema;
export type ContractStatusChanged = z.infer<typeof contractStatusChangedSchema>;
