import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { storeFailure } from './store-errors.js';

const withCode = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

describe('storeFailure', () => {
  it('calls a refusal of the data refused: a value, a size limit, a constraint', () => {
    for (const code of ['22021', '22P05', '23505', '23514', '54000', '21000'])
      expect(storeFailure(withCode(code)), code).toBe('refused');
  });

  it('calls the store being away or unable unavailable, whatever the data', () => {
    for (const code of [
      '08006',
      '57P01',
      '57P03',
      '53100',
      '40001',
      '40P01',
      '25006',
      '42P01',
      'XX000',
    ])
      expect(storeFailure(withCode(code)), code).toBe('unavailable');
  });

  it('calls a PostgreSQL that does not answer unavailable', async () => {
    // A port nothing listens on: the error node-postgres really raises.
    const client = new pg.Client({ host: '127.0.0.1', port: 1, connectionTimeoutMillis: 2000 });
    const error = await client.connect().then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).not.toBeNull();
    expect(storeFailure(error)).toBe('unavailable');
  });
});
