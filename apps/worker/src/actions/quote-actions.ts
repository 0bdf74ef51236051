import { callPartnerApi } from './action.js';
import type { ActionDefinition } from './action.js';

const eventType = 'quote.status_changed';

export const notifyCustomer: ActionDefinition = {
  eventType,
  changesState: false,
  call: { method: 'POST', path: '/customers/{customer_id}/notifications' },
  handler: callPartnerApi(),
};

export const updateSalesOpportunity: ActionDefinition = {
  eventType,
  changesState: true,
  call: { method: 'POST', path: '/sales-opportunities/by-quote/{quote_ref_code}' },
  handler: callPartnerApi(),
};

export const lockPrice: ActionDefinition = {
  eventType,
  changesState: true,
  call: { method: 'POST', path: '/quotes/{quote_id}/price-lock' },
  handler: callPartnerApi(),
};
