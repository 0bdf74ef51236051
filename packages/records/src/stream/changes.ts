// The record stream as its reader sees it: the changes the recorder reads, the consumer group it
// reads them in, and the order a stream entry's id gives them. What the writers append (the
// entries' formats, `recordStreamKey`) is `@pw/shared/records`
// (packages/shared/src/records/record-changes.ts).
import type { WebhookOutcome } from '@pw/shared/outcomes';
import type { AttemptRecord, AuditRecord, WebhookEntry } from '@pw/shared/records';

/** The consumer group the recorders read the stream with. */
export const RECORDER_GROUP = 'recorder';

/**
 * A change as the recorder reads it. `seq` orders changes: the stream entry's id (Redis's clock in
 * ms, then a counter) folded into one integer, kept with the rows so that a change written twice,
 * or an older change written after a newer one, never moves a record backwards.
 */
export type RecordChange =
  | { kind: 'webhook'; seq: bigint; at: string; webhook: WebhookEntry }
  | {
      kind: 'outcome';
      seq: bigint;
      at: string;
      /** The whole hot record after the change. */
      outcome: WebhookOutcome;
      /** The attempt this change ended, with its action's name; null for other changes. */
      attempt: (AttemptRecord & { action: string }) | null;
    }
  | {
      /**
       * An action's call completed (`CompletedEntry`): the change to that action alone, written
       * by the worker with the same change to the hot record (`OutcomeStore.completed`).
       */
      kind: 'completed';
      seq: bigint;
      at: string;
      webhook_id: string;
      attempt: AttemptRecord & { action: string };
    }
  | { kind: 'audit'; seq: bigint; at: string; entry: AuditRecord };

/** `1700000000000-5` → 1700000000000 * 2^20 + 5 (a counter never reaches 2^20 in one ms). */
export function streamIdToSeq(id: string): bigint {
  const [ms, counter] = id.split('-');
  return (BigInt(ms ?? '0') << 20n) + BigInt(counter ?? '0');
}

/** The ISO time of a stream entry id (Redis's clock when it was appended). */
export const streamIdTime = (id: string): string =>
  new Date(Number(id.split('-')[0])).toISOString();
