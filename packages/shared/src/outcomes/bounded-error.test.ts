// Texts cut for an error message or a record are cut between characters: a cut never leaves half
// of a surrogate pair, which the record store cannot keep (docs/records.md#text-the-store-keeps).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedError, headOf, MAX_ERROR_LENGTH, tailOf } from './bounded-error.js';

const wellFormed = (text: string) =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Text with many characters outside the BMP (each two UTF-16 units), ASCII between. */
const text = fc.string({ unit: fc.constantFrom('a', '😀', '𝔘', 'ß', '\u0301'), maxLength: 300 });

describe('headOf and tailOf', () => {
  it('keep well-formed text well-formed: at most `length` units, at least `length - 1`, from the right end', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 320 }), (value, length) => {
        const head = headOf(value, length);
        const tail = tailOf(value, length);
        for (const part of [head, tail]) {
          expect(wellFormed(part)).toBe(true);
          expect(part.length).toBeLessThanOrEqual(length);
          expect(part.length).toBeGreaterThanOrEqual(Math.min(value.length, length - 1));
        }
        expect(value.startsWith(head)).toBe(true);
        expect(value.endsWith(tail)).toBe(true);
      }),
    );
  });

  it('cut a partner body of 199 `a` and an emoji before the emoji', () => {
    expect(headOf(`${'a'.repeat(199)}😀`, 200)).toBe('a'.repeat(199));
    expect(tailOf(`😀${'a'.repeat(39)}`, 40)).toBe('a'.repeat(39));
  });
});

describe('boundedError', () => {
  it('keeps at most MAX_ERROR_LENGTH units, ends in … when cut, and never on half a pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '😀'), maxLength: 700 }), (value) => {
        const bounded = boundedError(value);
        expect(wellFormed(bounded)).toBe(true);
        expect(bounded.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
        if (value.length > MAX_ERROR_LENGTH) expect(bounded.endsWith('…')).toBe(true);
        else expect(bounded).toBe(value);
      }),
    );
  });
});
