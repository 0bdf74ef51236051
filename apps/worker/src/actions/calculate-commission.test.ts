import { describe, expect, it } from 'vitest';
import { actionsConfigSchema } from '@pw/shared/actions';
import { sampleEvent } from '@pw/shared/events';
import { computeCommission } from './calculate-commission.js';

const config = actionsConfigSchema.parse({
  commission: { default_rate: 0.05, rates_by_market: { ASIA: 0.1 } },
});
const sale = (market: string) => {
  const event = sampleEvent('sales', { status: 'converted' });
  return { ...event, metadata: { market } };
};

describe('computeCommission', () => {
  it("uses the market's configured rate, whatever the case of the market", () => {
    expect(computeCommission(sale('asia'), config)).toEqual({
      amount: 124.99,
      currency: 'EUR',
      rate: 0.1,
    });
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'US'])(
    'a market named %s that is not configured gets the default rate',
    (market) => {
      expect(computeCommission(sale(market), config)).toEqual({
        amount: 62.5,
        currency: 'EUR',
        rate: 0.05,
      });
    },
  );
});
