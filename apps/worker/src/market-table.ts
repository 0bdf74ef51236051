import { valueAt } from '@pw/shared/rules';

/**
 * A table keyed by `metadata.market`, matched case-insensitively. A Map, so a market named
 * `__proto__`, `constructor` or `toString` finds only a configured entry, never an object member.
 */
export type MarketTable<T> = ReadonlyMap<string, T>;

/** The table of a configured record (`markets`, `rates_by_market`), its keys lower-cased. */
export function marketTable<T>(entries: Readonly<Record<string, T>>): MarketTable<T> {
  return new Map(Object.entries(entries).map(([market, value]) => [market.toLowerCase(), value]));
}

/** The entry for the event's `metadata.market`, or undefined when it has none configured. */
export function forMarket<T>(table: MarketTable<T>, event: Record<string, unknown>): T | undefined {
  const market = valueAt(event, 'metadata.market');
  return typeof market === 'string' ? table.get(market.toLowerCase()) : undefined;
}
