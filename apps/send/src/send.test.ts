import { describe, expect, it } from 'vitest';
import { endpointFor, parseSendArgs, USAGE } from './send.js';

describe('npm run send arguments', () => {
  it('reads the kind and the options', () => {
    expect(
      parseSendArgs(
        ['sales', '--status', 'converted', '--count', '3', '--wait'],
        'http://127.0.0.1:3000',
      ),
    ).toEqual({
      kind: 'sales',
      status: 'converted',
      url: 'http://127.0.0.1:3000',
      count: 3,
      wait: true,
      timeoutSeconds: 300,
    });
  });

  it('refuses an unknown kind, a missing kind and a bad count, with the usage line', () => {
    expect(() => parseSendArgs(['invoice'], 'http://x')).toThrow(USAGE);
    expect(() => parseSendArgs([], 'http://x')).toThrow(USAGE);
    expect(() => parseSendArgs(['quote', '--count', '0'], 'http://x')).toThrow('--count');
    expect(() => parseSendArgs(['quote', '--colour', 'red'], 'http://x')).toThrow();
  });

  it('--invalid names a field by its dotted path', () => {
    expect(
      parseSendArgs(['quote', '--invalid', 'product.price_with_taxes'], 'http://x'),
    ).toMatchObject({ invalid: 'product.price_with_taxes' });
    expect(() => parseSendArgs(['quote', '--invalid', 'a..b'], 'http://x')).toThrow('--invalid');
  });

  it('--url is a base address, or a full endpoint when it has a path', () => {
    expect(endpointFor('http://localhost:3000', 'contract')).toBe(
      'http://localhost:3000/webhooks/contract-status',
    );
    expect(endpointFor('http://localhost:3000/', 'sales')).toBe(
      'http://localhost:3000/webhooks/sales-opportunity',
    );
    expect(endpointFor('https://hooks.example/in/quote', 'quote')).toBe(
      'https://hooks.example/in/quote',
    );
  });
});
