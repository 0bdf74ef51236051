import { callPartnerApi } from './action.js';
import type { ActionDefinition } from './action.js';

const eventType = 'contract.status_changed';

export const generateDocuments: ActionDefinition = {
  eventType,
  changesState: false,
  call: { method: 'POST', path: '/contracts/{contract_id}/documents' },
  handler: callPartnerApi(),
};

export const sendWelcomeMessage: ActionDefinition = {
  eventType,
  changesState: false,
  call: { method: 'POST', path: '/customers/{customer_id}/welcome-messages' },
  handler: callPartnerApi(),
};

export const activateService: ActionDefinition = {
  eventType,
  changesState: true,
  call: { method: 'POST', path: '/contracts/{contract_id}/activation' },
  handler: callPartnerApi(),
};

export const startBilling: ActionDefinition = {
  eventType,
  changesState: true,
  call: { method: 'POST', path: '/contracts/{contract_id}/billing' },
  handler: callPartnerApi(),
};
