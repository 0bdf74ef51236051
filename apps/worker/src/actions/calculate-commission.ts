import { valueAt } from '@pw/shared/rules';
import { PermanentError } from '@pw/shared/runtime';
import type { ActionsConfig } from '@pw/shared/actions';
import { forMarket, marketTable } from '../market-table.js';
import { MISSING_FIELD } from './expand-path.js';
import { callPartnerApi } from './action.js';
import type { ActionHandler } from './action.js';

export interface Commission {
  amount: number;
  currency: string;
  rate: number;
}

/** `conversion_value` times the market's rate (else the default rate), rounded to cents. */
export function computeCommission(
  event: Record<string, unknown>,
  config: ActionsConfig,
): Commission {
  const value = valueAt(event, 'conversion_details.conversion_value');
  if (typeof value !== 'number') {
    throw new PermanentError(MISSING_FIELD, 'the event has no conversion_details.conversion_value');
  }
  const rate =
    forMarket(marketTable(config.commission.rates_by_market), event) ??
    config.commission.default_rate;
  const currency = valueAt(event, 'conversion_details.currency');
  return {
    amount: Math.round(value * rate * 100) / 100,
    currency: typeof currency === 'string' ? currency : 'EUR',
    rate,
  };
}

/** The plain call, its body carrying the computed commission. */
export const calculateCommission: ActionHandler = callPartnerApi((event, ctx) => ({
  commission: computeCommission(event, ctx.config),
}));
