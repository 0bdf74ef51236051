import { describe, expect, it } from 'vitest';
import { sampleEvent } from '../events/samples.js';
import { canonicalJson } from './canonical-json.js';
import { sign, signEvent, verify, verifyEvent, withoutSignature } from './signature.js';

const event = sampleEvent('quote', { id: 'fixed', now: new Date('2026-11-21T10:00:00Z') });

describe('signing', () => {
  it('signs the canonical JSON without the signature member, as sha256= and lowercase hex', () => {
    const signed = signEvent(event, 'secret');
    expect(signed.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signed.signature).toBe(sign(canonicalJson(event), 'secret'));
    // Re-signing an already signed event ignores the old signature.
    expect(signEvent(signed, 'secret').signature).toBe(signed.signature);
  });

  it('canonical JSON sorts keys at every depth and has no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[2,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('is a known HMAC-SHA256 (RFC 4231 test case 2)', () => {
    expect(sign('what do ya want for nothing?', 'Jefe')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('verifies canonical and received-order signatures, under any configured secret', () => {
    const reordered = Object.fromEntries(Object.entries(event).reverse());
    const receivedOrder = { ...reordered, signature: sign(JSON.stringify(reordered), 'old') };
    expect(verifyEvent(signEvent(event, 'new'), ['new', 'old'])).toBe(true);
    expect(verifyEvent(signEvent(event, 'old'), ['new', 'old'])).toBe(true);
    expect(verifyEvent(receivedOrder, ['new', 'old'])).toBe(true);
  });

  it('refuses a wrong secret, a changed event, a missing or malformed signature', () => {
    const signed = signEvent(event, 'secret');
    expect(verifyEvent(signed, ['other'])).toBe(false);
    expect(verifyEvent({ ...signed, status: 'approved' }, ['secret'])).toBe(false);
    expect(verifyEvent(withoutSignature(signed), ['secret'])).toBe(false);
    for (const bad of [
      '',
      'sha256=',
      'sha256=zz',
      signed.signature.slice(0, -2),
      `sha1=${signed.signature.slice(7)}`,
    ]) {
      expect(verify(canonicalJson(event), bad, ['secret'])).toBe(false);
    }
    expect(verifyEvent({ ...signed, signature: 7 }, ['secret'])).toBe(false);
  });

  it('accepts upper-case hex as the same digest', () => {
    const signed = signEvent(event, 'secret');
    expect(
      verify(canonicalJson(event), `sha256=${signed.signature.slice(7).toUpperCase()}`, ['secret']),
    ).toBe(true);
  });
});
