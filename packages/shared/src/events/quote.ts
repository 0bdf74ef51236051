import { z } from 'zod';
import {
  dateOrDateTime,
  decimalAmount,
  previousStatus,
  signature,
  text,
  zonedDateTime,
} from './fields.js';

export const QUOTE_EVENT = 'quote.status_changed';

/** `POST /webhooks/quote-status`. Unknown members are kept (the payload is unversioned). */
export const quoteStatusChangedSchema = z.looseObject({
  event_type: z.literal(QUOTE_EVENT),
  quote_id: text,
  quote_ref_code: z.string().optional(),
  status: text,
  previous_status: previousStatus,
  timestamp: zonedDateTime,
  customer_id: text,
  product: z
    .looseObject({
      product_id: z.string().optional(),
      product_name: z.string().optional(),
      price_with_taxes: decimalAmount.optional(),
      currency: z.string().optional(),
    })
    .optional(),
  expiry_date: dateOrDateTime.optional(),
  signature,
  metadata: z
    .looseObject({
      partner_id: z.string().optional(),
      market: z.string().optional(),
      channel: z.string().optional(),
    })
    .optional(),
});

export type QuoteStatusChanged = z.infer<typeof quoteStatusChangedSchema>;
