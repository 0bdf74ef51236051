import { describe, expect, it } from 'vitest';
import { forMarket, marketTable } from './market-table.js';

const event = (market: unknown) => ({ metadata: { market } });

describe('market tables', () => {
  const rates = marketTable({ ASIA: 0.06, eu: 0.04 });

  it('matches a configured market whatever its case', () => {
    expect(forMarket(rates, event('asia'))).toBe(0.06);
    expect(forMarket(rates, event('EU'))).toBe(0.04);
  });

  it('finds nothing for an unknown, absent or non-string market', () => {
    expect(forMarket(rates, event('US'))).toBeUndefined();
    expect(forMarket(rates, {})).toBeUndefined();
    expect(forMarket(rates, event(7))).toBeUndefined();
  });

  it.each([
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '__defineGetter__',
  ])('finds nothing for %s, a member of every object', (market) => {
    expect(forMarket(rates, event(market))).toBeUndefined();
    expect(forMarket(marketTable({}), event(market))).toBeUndefined();
  });

  it('a market configured under such a name is found like any other', () => {
    // JSON.parse makes `__proto__` an own key, as a configuration file would.
    const configured = JSON.parse('{"__proto__": 0.07, "Constructor": 0.08}') as Record<
      string,
      number
    >;
    const table = marketTable(configured);
    expect(forMarket(table, event('__PROTO__'))).toBe(0.07);
    expect(forMarket(table, event('constructor'))).toBe(0.08);
  });
});
