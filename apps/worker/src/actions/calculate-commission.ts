import { PermanentError, valueAt } from '@pw/shared';
import type { ActionsConfig } from '@pw/shared';
import { callPartnerApi } from './action.js';
import type { ActionDefinition } from './action.js';

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
    throw new PermanentError(
      'missing_field',
      'the event has no conversion_details.conversion_value',
    );
  }
  const market = valueAt(event, 'metadata.market');
  const rates = Object.fromEntries(
    Object.entries(config.commission.rates_by_market).map(([name, rate]) => [
      name.toLowerCase(),
      rate,
    ]),
  );
  const rate =
    (typeof market === 'string' ? rates[market.toLowerCase()] : undefined) ??
    config.commission.default_rate;
  const currency = valueAt(event, 'conversion_details.currency');
  return {
    amount: Math.round(value * rate * 100) / 100,
    currency: typeof currency === 'string' ? currency : 'EUR',
    rate,
  };
}

export const calculateCommission: ActionDefinition = {
  eventType: 'sales_opportunity.status_changed',
  changesState: false,
  call: { method: 'POST', path: '/commissions' },
  handler: callPartnerApi((event, ctx) => ({ commission: computeCommission(event, ctx.config) })),
};
