import { describe, expect, it } from 'vitest';
import { countMinute, isoNow } from './time-stamps.js';

describe('the outcome stamps', () => {
  it('isoNow is the ISO time of the millisecond it is asked for, whatever it was asked before', () => {
    const times = [Date.UTC(2026, 10, 25, 4, 0, 0, 0), Date.UTC(2026, 10, 25, 4, 0, 0, 0)];
    times.push(times[0]! + 1, times[0]! + 61_000, times[0]! - 3_600_000);
    for (const ms of times) expect(isoNow(ms)).toBe(new Date(ms).toISOString());
    const now = isoNow();
    expect(Math.abs(Date.parse(now) - Date.now())).toBeLessThan(1000);
  });

  it('countMinute is the minute a moment falls in, seconds zero', () => {
    expect(countMinute(new Date('2026-11-25T04:07:59.999Z'))).toBe('2026-11-25T04:07:00.000Z');
  });
});
