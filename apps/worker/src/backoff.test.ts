import { describe, expect, it } from 'vitest';
import { retryDelay } from './backoff.js';
import { retryAfterMs } from './partner-api.js';

describe('retry delays', () => {
  it('fixed: the same delay every time', () => {
    expect(
      [1, 2, 5].map((n) => retryDelay(n, { type: 'fixed', delay_ms: 300 }, undefined)),
    ).toEqual([300, 300, 300]);
  });

  it('exponential: doubles each retry, with jitter between half and all of it', () => {
    const policy = { type: 'exponential', delay_ms: 1000 } as const;
    expect(retryDelay(1, policy, undefined, () => 0)).toBe(500);
    expect(retryDelay(1, policy, undefined, () => 1)).toBe(1000);
    expect(retryDelay(4, policy, undefined, () => 1)).toBe(8000);
    expect(retryDelay(4, policy, undefined, () => 0)).toBe(4000);
  });

  it("never sooner than the partner's Retry-After", () => {
    expect(retryDelay(1, { type: 'fixed', delay_ms: 100 }, 5000)).toBe(5000);
    expect(retryDelay(1, { type: 'fixed', delay_ms: 9000 }, 5000)).toBe(9000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(
      retryAfterMs('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT')),
    ).toBe(10_000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});
