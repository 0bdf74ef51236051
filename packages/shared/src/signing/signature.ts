import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

const SIGNATURE_PATTERN = /^sha256=([0-9a-fA-F]{64})$/;

/** The event without its `signature` member: what is signed, and what deduplication compares. */
export function withoutSignature(event: Record<string, unknown>): Record<string, unknown> {
  const { signature: _omitted, ...rest } = event;
  return rest;
}

/** `sha256=` + lowercase hex HMAC-SHA256 of `payload`. */
export function sign(payload: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;
}

/** True when `signature` is the HMAC of `payload` under any of `secrets`; constant-time per secret. */
export function verify(payload: string, signature: string, secrets: readonly string[]): boolean {
  const match = SIGNATURE_PATTERN.exec(signature);
  if (!match?.[1]) return false;
  const received = Buffer.from(match[1], 'hex');
  let ok = false;
  // Every secret is tried, so the time taken does not tell which one matched.
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(payload).digest();
    ok = timingSafeEqual(expected, received) || ok;
  }
  return ok;
}

/** Returns the event with a canonical-JSON `signature` made with `secret`. */
export function signEvent<T extends Record<string, unknown>>(
  event: T,
  secret: string,
): T & { signature: string } {
  const unsigned = withoutSignature(event);
  return { ...unsigned, signature: sign(canonicalJson(unsigned), secret) } as T & {
    signature: string;
  };
}

/**
 * Verifies an event's `signature` against either serialisation the contract allows: keys in the
 * order received, tried first since it costs one serialisation, then canonical (keys sorted), which
 * sorts every object. A signature that is not `sha256=` and 64 hex digits costs neither.
 */
export function verifyEvent(
  event: Record<string, unknown>,
  secrets: readonly string[],
  /**
   * The event without `signature`, and its canonical form, when the caller keeps them for later
   * (each made once, on first use).
   */
  kept: { unsigned?: () => Record<string, unknown>; canonical?: () => string } = {},
): boolean {
  const { signature } = event;
  if (typeof signature !== 'string' || !SIGNATURE_PATTERN.test(signature)) return false;
  const unsigned = kept.unsigned ? kept.unsigned() : withoutSignature(event);
  return (
    verify(JSON.stringify(unsigned), signature, secrets) ||
    verify(kept.canonical ? kept.canonical() : canonicalJson(unsigned), signature, secrets)
  );
}
