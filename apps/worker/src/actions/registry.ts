import { ACTION_SPECS } from '@pw/shared';
import type { ActionName } from '@pw/shared';
import { callPartnerApi } from './action.js';
import type { ActionDefinition, ActionHandler } from './action.js';
import { calculateCommission } from './calculate-commission.js';

/** The handlers that differ from the plain call, one line each; every other action makes it. */
const SPECIAL_HANDLERS: Partial<Record<ActionName, ActionHandler>> = {
  calculate_commission: calculateCommission,
};

const plainCall = callPartnerApi();

/** An action's definition: its row of the shared action table and its handler. */
export function actionDefinition(action: ActionName): ActionDefinition {
  return { ...ACTION_SPECS[action], handler: SPECIAL_HANDLERS[action] ?? plainCall };
}
