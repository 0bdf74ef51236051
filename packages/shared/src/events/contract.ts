import { z } from 'zod';
import { dateOrDateTime, previousStatus, signature, text, zonedDateTime } from './fields.js';

export const CONTRACT_EVENT = 'contract.status_changed';

/** `POST /webhooks/contract-status`. Unknown members are kept (the payload is unversioned). */
export const contractStatusChangedSchema = z.looseObject({
  event_type: z.literal(CONTRACT_EVENT),
  contract_id: text,
  contract_number: z.string().optional(),
  status: text,
  previous_status: previousStatus,
  timestamp: zonedDateTime,
  customer_id: text,
  product: z
    .looseObject({
      product_name: z.string().optional(),
      product_id: z.string().optional(),
      policy_id: z.string().optional(),
    })
    .optional(),
  lifecycle_stage: z.string().optional(),
  effective_date: dateOrDateTime.optional(),
  expiry_date: dateOrDateTime.optional(),
  signature,
  metadata: z
    .looseObject({
      partner_id: z.string().optional(),
      market: z.string().optional(),
      activation_trigger: z.string().optional(),
    })
    .optional(),
});

export type ContractStatusChanged = z.infer<typeof contractStatusChangedSchema>;
