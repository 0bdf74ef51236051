import { z } from 'zod';
import { identifier } from './fields.js';
import { statusChangedEvent } from './status-changed-event.js';

export const SALES_OPPORTUNITY_EVENT = 'sales_opportunity.status_changed';

/** `POST /webhooks/sales-opportunity`. */
export const salesOpportunityEvent = statusChangedEvent({
  type: SALES_OPPORTUNITY_EVENT,
  entityIdField: 'sales_id',
  references: {},
  statusField: 'opportunity_status',
  fields: {
    quote_ref_code: identifier.optional(),
    conversion_details: z
      .looseObject({
        contract_id: z.string().optional(),
        conversion_value: z.number().optional(),
        currency: z.string().optional(),
        conversion_channel: z.string().optional(),
      })
      .optional(),
    pipeline_stage: z.string().optional(),
    sales_agent: identifier.optional(),
  },
  metadata: { campaign_source: z.string().optional(), conversion_time_days: z.int().optional() },
});

export const salesOpportunityStatusChangedSchema = salesOpportunityEvent.schema;
export type SalesOpportunityStatusChanged = z.infer<typeof salesOpportunityStatusChangedSchema>;
