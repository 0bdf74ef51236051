import { describe, expect, it } from 'vitest';
import { PermanentError } from '@pw/shared/runtime';
import { expandPath, INVALID_PATH_VALUE, MAX_DECODINGS, MISSING_FIELD } from './expand-path.js';

const template = '/quotes/{quote_id}/price-lock';

/** The code expandPath fails with, or undefined when it fills the template. */
function codeFor(value: unknown): string | undefined {
  try {
    expandPath(template, { quote_id: value });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(PermanentError);
    return (error as PermanentError).code;
  }
}

function messageFor(value: unknown): string {
  try {
    expandPath(template, { quote_id: value });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expandPath accepted ${JSON.stringify(value)}`);
}

describe('expandPath', () => {
  it('fills each placeholder with the value encoded as one path segment', () => {
    expect(expandPath(template, { quote_id: 'Q-1' })).toBe('/quotes/Q-1/price-lock');
    expect(expandPath(template, { quote_id: 'a/b?c#d e' })).toBe(
      '/quotes/a%2Fb%3Fc%23d%20e/price-lock',
    );
    expect(expandPath(template, { quote_id: '100%' })).toBe('/quotes/100%25/price-lock');
    expect(expandPath(template, { quote_id: 42 })).toBe('/quotes/42/price-lock');
    expect(expandPath('/x/{metadata.market}', { metadata: { market: 'EU' } })).toBe('/x/EU');
  });

  it('encodes the dots a value may hold, so a dotted value cannot be read as a dot segment', () => {
    expect(expandPath(template, { quote_id: '...' })).toBe('/quotes/.../price-lock');
    expect(expandPath(template, { quote_id: '../admin' })).toBe('/quotes/..%2Fadmin/price-lock');
    expect(expandPath(template, { quote_id: 'v1.2' })).toBe('/quotes/v1.2/price-lock');
  });

  it.each(['', '.', '..'])('refuses %j as invalid_path_value', (value) => {
    expect(codeFor(value)).toBe(INVALID_PATH_VALUE);
  });

  it.each(['%2e', '%2E', '%2e%2e', '%2E.', '.%2e', '%2E%2e', '%252e%252e', '%25252E.', '%252E'])(
    'refuses %j, which decodes (once or more) to a dot segment',
    (value) => {
      expect(codeFor(value)).toBe(INVALID_PATH_VALUE);
    },
  );

  it('handles malformed escapes without throwing anything but its own error', () => {
    for (const value of ['%', '%zz', '%e2%82', '%2e%2e%', '..%', '%%2e%2e', '%c0%ae%c0%ae']) {
      expect(() => expandPath(template, { quote_id: value })).not.toThrow();
    }
    // Text that cannot be encoded at all (a lone surrogate) fails permanently, never with URIError.
    expect(codeFor('\ud800')).toBe(INVALID_PATH_VALUE);
  });

  it(`refuses a value still holding escapes after ${MAX_DECODINGS} decodings`, () => {
    // Each `25` is one more level of encoding around `%41` (`A`).
    const nested = (levels: number) => `%${'25'.repeat(levels - 1)}41`;
    expect(expandPath(template, { quote_id: nested(MAX_DECODINGS) })).toBe(
      `/quotes/${encodeURIComponent(nested(MAX_DECODINGS))}/price-lock`,
    );
    expect(codeFor(nested(MAX_DECODINGS + 1))).toBe(INVALID_PATH_VALUE);
  });

  it('a missing or non-scalar value is missing_field', () => {
    expect(codeFor(undefined)).toBe(MISSING_FIELD);
    expect(codeFor(null)).toBe(MISSING_FIELD);
    expect(codeFor({ id: 1 })).toBe(MISSING_FIELD);
    expect(() => expandPath(template, {})).toThrow(PermanentError);
  });

  it('names the field in its message and keeps the message short whatever the value', () => {
    for (const value of ['..', `%${'25'.repeat(50_000)}2e`, { big: 'x'.repeat(100_000) }]) {
      const message = messageFor(value);
      expect(message).toContain('quote_id');
      expect(message.length).toBeLessThan(200);
    }
  });
});
