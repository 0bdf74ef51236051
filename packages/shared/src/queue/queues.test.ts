import { describe, expect, it } from 'vitest';
import { actionJobId, actionOfJobId } from './queues.js';

describe('action job ids', () => {
  it('name their action, read back by actionOfJobId; any other id names none', () => {
    expect(actionOfJobId(actionJobId('wh_AAAAAAAAAAAAAAAAAAAAAA', 'lock_price'))).toBe(
      'lock_price',
    );
    for (const id of ['lock_price', '.lock_price', 'wh_A.unknown_action', 'wh_A.toString', '7']) {
      expect(actionOfJobId(id), id).toBeUndefined();
    }
  });
});
