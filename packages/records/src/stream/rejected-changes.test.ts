import { expect, it } from 'vitest';
import { keys } from '@pw/shared/queue';
import { rejectedStreamKey } from './rejected-changes.js';

// The older builder of the rejected stream's key, beside the others @pw/shared's
// redis-keys.test.ts compares with the keys it spells.
it('is the key redis-keys.ts spells', () => {
  expect(rejectedStreamKey('pw')).toBe(keys.rejected('pw'));
});
