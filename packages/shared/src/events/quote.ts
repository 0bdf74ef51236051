import { z } from 'zod';
import { dateOrDateTime, decimalAmount, identifier } from './fields.js';
import { statusChangedEvent } from './status-changed-event.js';

export const QUOTE_EVENT = 'quote.status_changed';

/** `POST /webhooks/quote-status`. */
export const quoteEvent = statusChangedEvent({
  type: QUOTE_EVENT,
  entityIdField: 'quote_id',
  references: { quote_ref_code: identifier.optional() },
  statusField: 'status',
  fields: {
    product: z
      .looseObject({
        product_id: identifier.optional(),
        product_name: z.string().optional(),
        price_with_taxes: decimalAmount.optional(),
        currency: z.string().optional(),
      })
      .optional(),
    expiry_date: dateOrDateTime.optional(),
  },
  metadata: { market: z.string().optional(), channel: z.string().optional() },
});

export const quoteStatusChangedSchema = quoteEvent.schema;
export type QuoteStatusChanged = z.infer<typeof quoteStatusChangedSchema>;
