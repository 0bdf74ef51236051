import { describe, expect, it } from 'vitest';
import { circuitView } from './circuit-view.js';

const TARGET = 'http://127.0.0.1:4010 partner/partner-webhooks';
/** A circuit of `fields`, holding nothing; `poison` as ZREVRANGE … WITHSCORES answers it. */
const view = (fields: Record<string, string>, poison: string[] = []) =>
  circuitView(TARGET, fields, 0, poison.length / 2, poison);

describe('circuitView', () => {
  it('says why an open circuit is open, and gives a closed one no reason', () => {
    expect(view({ state: 'open', reason: 'reopened' }).reason).toBe('reopened');
    expect(view({ state: 'open', reason: 'failures' }).reason).toBe('failures');
    expect(view({ state: 'closed', reason: 'reopened' }).reason).toBeNull();
    expect(view({}).reason).toBeNull();
  });

  it('says an operator holds it whenever `manual` is set, with or without a reason', () => {
    expect(view({ state: 'open', manual: '1' }).reason).toBe('manual');
    expect(view({ state: 'open', manual: '1', reason: 'failures' }).reason).toBe('manual');
  });

  it('takes an open circuit without a known reason to have been opened by failures', () => {
    expect(view({ state: 'open' }).reason).toBe('failures');
    expect(view({ state: 'open', reason: 'something-new' }).reason).toBe('failures');
  });

  it('is recovering only while closed', () => {
    expect(view({ state: 'closed', recovering: '1' }).recovering).toBe(true);
    expect(view({ state: 'open', recovering: '1' }).recovering).toBe(false);
    expect(view({ state: 'closed' }).recovering).toBe(false);
  });

  it('reads each poison input’s webhook and action from its job id, and when it was judged', () => {
    const at = Date.parse('2026-03-01T12:00:00.000Z');
    const { poison, poison_inputs } = view({}, [
      'wh_AAAAAAAAAAAAAAAAAAAA-_.notify_customer',
      String(at + 1000),
      'wh_BBBBBBBBBBBBBBBBBBBBBB.lock_price',
      String(at),
    ]);
    expect(poison_inputs).toBe(2);
    expect(poison).toEqual([
      {
        webhook_id: 'wh_AAAAAAAAAAAAAAAAAAAA-_',
        action: 'notify_customer',
        since: '2026-03-01T12:00:01.000Z',
      },
      {
        webhook_id: 'wh_BBBBBBBBBBBBBBBBBBBBBB',
        action: 'lock_price',
        since: '2026-03-01T12:00:00.000Z',
      },
    ]);
  });
});
