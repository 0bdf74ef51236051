import { describe, expect, test } from 'vitest';
import { accepted, action, outcome, webhookId } from '../test/changes.js';
import { batchRows } from './batch-rows.js';

const id = webhookId(1);

describe('batchRows', () => {
  test('keeps the newest change of each webhook and action, and the event of its webhook change', () => {
    const rows = batchRows([
      outcome(3n, '2025-03-01T10:00:03.000Z', {
        webhook_id: id,
        actions: [action('a', { state: 'completed' })],
      }),
      accepted(1n, { webhook_id: id, actions: ['a'], customer_id: 'C-1' }),
      outcome(2n, '2025-03-01T10:00:02.000Z', {
        webhook_id: id,
        actions: [action('a', { state: 'active' })],
      }),
    ]);
    expect(rows.webhooks).toEqual([
      expect.objectContaining({
        seq: '3',
        state: 'completed',
        customer_id: 'C-1',
        event: expect.any(Object) as object,
      }),
    ]);
    expect(rows.webhooks[0]?.finished_at).toBe('2025-03-01T10:00:03.000Z');
    expect(rows.actions).toEqual([
      expect.objectContaining({ name: 'a', state: 'completed', seq: '3' }),
    ]);
  });

  test('a webhook change opens every action waiting', () => {
    const rows = batchRows([accepted(7n, { webhook_id: id, actions: ['b', 'a'] })]);
    expect(rows.webhooks[0]).toMatchObject({
      state: 'queued',
      finished_at: null,
      actions: ['b', 'a'],
    });
    expect(rows.actions.map((row) => [row.name, row.state, row.attempts])).toEqual([
      ['a', 'waiting', 0],
      ['b', 'waiting', 0],
    ]);
  });

  test('writes no rows for no changes', () => {
    expect(batchRows([])).toEqual({
      touched: [],
      webhooks: [],
      actions: [],
      attempts: [],
      audit_entries: [],
    });
  });
});
