import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from './events/error-codes.js';
import { FAILURE_CODES, PermanentError, PwError, RetryableError } from './errors.js';
import type { PwErrorCode } from './errors.js';

describe('the code table', () => {
  it('types every code a PwError carries: one outside the table does not compile', () => {
    // @ts-expect-error: not a code of the table
    const unknown = new PwError('no_such_code', 'a typo');
    const known = new PwError('invalid_cursor', 'the cursor is malformed');
    const partner = new PermanentError('http_404', 'not found');
    const refusal = new RetryableError('unavailable', 'Redis did not confirm', { retryAfterMs: 1 });
    const codes: PwErrorCode[] = [known.code, partner.code, refusal.code];
    expect(codes).toEqual(['invalid_cursor', 'http_404', 'unavailable']);
    expect(unknown.code).toBe('no_such_code');
  });

  it('says what each code means, and no failure code reuses a refusal code of the ingress', () => {
    for (const [code, meaning] of Object.entries(FAILURE_CODES)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(meaning.length).toBeGreaterThan(10);
      expect(Object.keys(ERROR_CODES)).not.toContain(code);
    }
  });
});
