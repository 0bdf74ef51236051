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

/** Each action's definition, made once: the processor asks for one per try. */
const DEFINITIONS = new Map(
  Object.entries(ACTION_SPECS).map(([action, spec]): [string, ActionDefinition] => [
    action,
    { ...spec, handler: SPECIAL_HANDLERS[action as ActionName] ?? plainCall },
  ]),
);

/** An action's definition: its row of the shared action table and its handler. */
export function actionDefinition(action: ActionName): ActionDefinition {
  return (
    DEFINITIONS.get(action) ?? {
      ...ACTION_SPECS[action],
      handler: SPECIAL_HANDLERS[action] ?? plainCall,
    }
  );
}
