import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson (RFC 8785)', () => {
  it("equals the canonicalize package, the RFC author's reference, on generated JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 3000 },
    );
  });

  it('sorts keys by UTF-16 code units, integer-like keys included, and serialises numbers as ECMAScript does', () => {
    const value = JSON.parse(
      '{"10":1,"2":2,"b":[1e21,0.1,-0,1E-7],"a":"\\u20ac\\ud83d\\ude00","\\ud83d\\ude00":0,"\\ufb01":0}',
    ) as unknown;
    expect(canonicalJson(value)).toBe(canonicalize(value));
    expect(canonicalJson(value)).toBe(
      '{"10":1,"2":2,"a":"€😀","b":[1e+21,0.1,0,1e-7],"😀":0,"ﬁ":0}',
    );
  });

  it('leaves out undefined members and refuses what has no canonical form', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(() => canonicalJson({ a: '\ud800' })).toThrow(TypeError);
    expect(() => canonicalJson({ '\udc00': 1 })).toThrow(TypeError);
    expect(() => canonicalJson([Infinity])).toThrow(TypeError);
    expect(() => canonicalJson(NaN)).toThrow(TypeError);
  });
});
