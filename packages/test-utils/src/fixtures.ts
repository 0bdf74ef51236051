import { sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { EventKind, SampleOptions } from '@pw/shared/events';

/** The secret the tests sign with (the production `signEvent`, never a hand-made digest). */
export const TEST_SECRET = 'test-secret-1';
/** A second, rotated-in secret. */
export const ROTATED_SECRET = 'test-secret-2';

/** A valid event of `kind`, signed canonically with `secret`. */
export function signedEvent(
  kind: EventKind,
  options: SampleOptions & { secret?: string } = {},
): Record<string, unknown> & { signature: string } {
  return signEvent(sampleEvent(kind, options), options.secret ?? TEST_SECRET);
}
