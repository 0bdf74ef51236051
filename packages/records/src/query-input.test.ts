import { expect, test } from 'vitest';
import {
  INVALID_CURSOR,
  INVALID_TIME,
  decodeCursor,
  encodeCursor,
  pageLimit,
  parseTime,
} from './query-input.js';

test('a cursor reads back as the position it was made of', () => {
  const cursor = encodeCursor('2025-03-01T10:00:00.000Z', 'wh_x');
  expect(cursor).toMatch(/^[\w-]+$/);
  expect(decodeCursor(cursor)).toEqual({ time: '2025-03-01T10:00:00.000Z', key: 'wh_x' });
});

test('anything else is an invalid cursor', () => {
  for (const cursor of [
    '',
    '%%%',
    Buffer.from('{}').toString('base64url'),
    encodeCursor('soon', 'wh_x'),
  ]) {
    expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ code: INVALID_CURSOR }));
  }
});

test('times need a zone unless they are a bare date', () => {
  expect(parseTime('2025-03-01', 'from').toISOString()).toBe('2025-03-01T00:00:00.000Z');
  expect(parseTime('2025-03-01T12:00:00+02:00', 'from').toISOString()).toBe(
    '2025-03-01T10:00:00.000Z',
  );
  for (const time of ['2025-03-01T12:00:00', '2025-02-30T00:00:00Z', 'yesterday']) {
    expect(() => parseTime(time, 'to')).toThrow(expect.objectContaining({ code: INVALID_TIME }));
  }
});

test('page limits fall back, are whole and stay in bounds', () => {
  expect(pageLimit(undefined, 50, 500)).toBe(50);
  expect(pageLimit(Number.NaN, 50, 500)).toBe(50);
  expect(pageLimit(7.9, 50, 500)).toBe(7);
  expect(pageLimit(-3, 50, 500)).toBe(1);
  expect(pageLimit(501, 50, 500)).toBe(500);
});
