import { callPartnerApi } from './action.js';
import type { ActionDefinition } from './action.js';

const eventType = 'sales_opportunity.status_changed';

export const updateCrm: ActionDefinition = {
  eventType,
  changesState: true,
  call: { method: 'PUT', path: '/crm/opportunities/{sales_id}' },
  handler: callPartnerApi(),
};

export const updateMetrics: ActionDefinition = {
  eventType,
  changesState: false,
  call: { method: 'POST', path: '/metrics/conversions' },
  handler: callPartnerApi(),
};

export const startFollowUpSequence: ActionDefinition = {
  eventType,
  changesState: true,
  call: { method: 'POST', path: '/customers/{customer_id}/follow-up-sequences' },
  handler: callPartnerApi(),
};
