import { describe, expect, it } from 'vitest';
import { COMPLETED_KIND } from '@pw/shared/records';
import { parseChange } from './parse-change.js';

// A `completed` entry of the record stream as the recorder reads it.

const entry = (data: Record<string, unknown>): [string, string[]] => [
  '1700000000000-1',
  ['k', COMPLETED_KIND, 'd', JSON.stringify(data)],
];

const call = {
  webhook_id: 'wh_1',
  action: 'notify_customer',
  started_at: '2026-11-27T10:00:00.000Z',
  finished_at: '2026-11-27T10:00:00.020Z',
  status: 200,
  duration_ms: 20,
};

describe('parseChange of a completed call', () => {
  it('takes the call number the worker wrote', () => {
    const [change] = parseChange(entry({ ...call, attempt: 3 }));
    expect(change).toMatchObject({
      kind: 'completed',
      webhook_id: 'wh_1',
      attempt: { action: 'notify_customer', attempt: 3, outcome: 'completed', status: 200 },
    });
  });

  it('reads an entry of the previous release, which wrote first calls only and no number, as the first call', () => {
    const [change] = parseChange(entry(call));
    expect(change).toMatchObject({ kind: 'completed', attempt: { attempt: 1 } });
  });

  it('refuses an entry without its times, or with a number that is not one', () => {
    expect(() => parseChange(entry({ ...call, finished_at: undefined }))).toThrow(/times/);
    expect(() => parseChange(entry({ ...call, attempt: '2' }))).toThrow(/attempt/);
  });
});
