import type { MinimalJob } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { BACKOFF_TYPE } from '@pw/shared/queue';
import { RetryableError } from '@pw/shared/runtime';
import type { ActionJobData } from '@pw/shared/queue';
import { actionBackoff, retryDelay } from './backoff.js';
import { httpErrorCode, MAX_RETRY_AFTER_MS, NETWORK_ERROR, retryAfterMs } from './partner-api.js';

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

  it('honours Retry-After up to one hour: a longer one, in seconds or as a date, counts as one hour', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(3_600_000);
    expect(retryAfterMs('3600')).toBe(3_600_000);
    expect(retryAfterMs('3601')).toBe(3_600_000);
    expect(retryAfterMs('999999999')).toBe(3_600_000);
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(retryAfterMs('Wed, 21 Oct 2026 08:28:00 GMT', now)).toBe(3_600_000);
    expect(retryAfterMs('Fri, 31 Dec 9999 23:59:59 GMT', now)).toBe(3_600_000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('-5')).toBe(0);
  });

  it("takes the Retry-After from the failed try's RetryableError itself, not from its cause", () => {
    const job = {
      data: { backoff: { type: 'fixed', delay_ms: 100 } },
    } as MinimalJob<ActionJobData>;
    const asked = new RetryableError(httpErrorCode(503), 'answered 503', { retryAfterMs: 5000 });
    expect(actionBackoff(1, BACKOFF_TYPE, asked, job)).toBe(5000);
    expect(actionBackoff(1, BACKOFF_TYPE, new Error('wrapped', { cause: asked }), job)).toBe(100);
    expect(
      actionBackoff(1, BACKOFF_TYPE, new RetryableError(NETWORK_ERROR, 'no header'), job),
    ).toBe(100);
  });
});
