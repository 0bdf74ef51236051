import { ACTION_NAMES, ACTION_SPECS } from '@pw/shared/actions';
import type { ActionName } from '@pw/shared/actions';
import { callPartnerApi } from './action.js';
import type { ActionDefinition, ActionHandler } from './action.js';
import { calculateCommission } from './calculate-commission.js';

/** The handlers that differ from the plain call, one line each; every other action makes it. */
const SPECIAL_HANDLERS: Partial<Record<ActionName, ActionHandler>> = {
  calculate_commission: calculateCommission,
};

const plainCall = callPartnerApi();

const definitionOf = (action: ActionName): ActionDefinition => ({
  ...ACTION_SPECS[action],
  handler: SPECIAL_HANDLERS[action] ?? plainCall,
});

/** Each action's definition, made once: the processor asks for one per try. */
const DEFINITIONS = new Map(ACTION_NAMES.map((action) => [action, definitionOf(action)]));

/** An action's definition: its row of the shared action table and its handler. */
export function actionDefinition(action: ActionName): ActionDefinition {
  return DEFINITIONS.get(action) ?? definitionOf(action);
}
