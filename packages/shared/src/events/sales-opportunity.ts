import { z } from 'zod';
import { previousStatus, signature, text, zonedDateTime } from './fields.js';

export const SALES_OPPORTUNITY_EVENT = 'sales_opportunity.status_changed';

/** `POST /webhooks/sales-opportunity`. Unknown members are kept (the payload is unversioned). */
export const salesOpportunityStatusChangedSchema = z.looseObject({
  event_type: z.literal(SALES_OPPORTUNITY_EVENT),
  sales_id: text,
  opportunity_status: text,
  previous_status: previousStatus,
  timestamp: zonedDateTime,
  customer_id: text,
  quote_ref_code: z.string().optional(),
  conversion_details: z
    .looseObject({
      contract_id: z.string().optional(),
      conversion_value: z.number().optional(),
      currency: z.string().optional(),
      conversion_channel: z.string().optional(),
    })
    .optional(),
  pipeline_stage: z.string().optional(),
  sales_agent: z.string().optional(),
  signature,
  metadata: z
    .looseObject({
      partner_id: z.string().optional(),
      campaign_source: z.string().optional(),
      conversion_time_days: z.int().optional(),
    })
    .optional(),
});

export type SalesOpportunityStatusChanged = z.infer<typeof salesOpportunityStatusChangedSchema>;
