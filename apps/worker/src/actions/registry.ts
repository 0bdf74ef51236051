import type { ActionName } from '@pw/shared';
import type { ActionDefinition } from './action.js';
import { calculateCommission } from './calculate-commission.js';
import {
  activateService,
  generateDocuments,
  sendWelcomeMessage,
  startBilling,
} from './contract-actions.js';
import { lockPrice, notifyCustomer, updateSalesOpportunity } from './quote-actions.js';
import { startFollowUpSequence, updateCrm, updateMetrics } from './sales-actions.js';

/** Every action's definition; the type makes a missing one a compile error. */
export const ACTIONS: Readonly<Record<ActionName, ActionDefinition>> = {
  notify_customer: notifyCustomer,
  update_sales_opportunity: updateSalesOpportunity,
  lock_price: lockPrice,
  generate_documents: generateDocuments,
  send_welcome_message: sendWelcomeMessage,
  activate_service: activateService,
  start_billing: startBilling,
  update_crm: updateCrm,
  calculate_commission: calculateCommission,
  update_metrics: updateMetrics,
  start_follow_up_sequence: startFollowUpSequence,
};
