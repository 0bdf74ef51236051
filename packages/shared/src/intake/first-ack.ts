import type { ActionName } from '../actions/action-table.js';
import type { Acknowledgement } from '../events/acknowledgement.js';
import type { AcceptedWebhook } from '../queue/queues.js';
import { findAck, findLegacyAck } from './kept-acks.js';
import type { DedupEntry, HashReader } from './kept-acks.js';

/**
 * The ack of an accepted webhook: the first delivery's, and every repeat's; a quarantined one's
 * says so, with its problems.
 */
export const ackOf = (webhook: AcceptedWebhook): Acknowledgement => ({
  received: true,
  processed_at: webhook.received_at,
  webhook_id: webhook.webhook_id,
  actions_triggered: webhook.actions,
  ...(webhook.problems ? { quarantined: true as const, problems: webhook.problems } : {}),
});

/** Where a repeat's first ack is looked for. */
export interface RepeatOf {
  /** The first delivery's id, as the intake script answered. */
  firstId: string;
  /** The event's entry, where the intake keeps the first ack (`kept-acks.ts`). */
  entry: DedupEntry;
  /** The repeat itself. */
  repeat: AcceptedWebhook;
}

/**
 * The ack a repeat gets: the first delivery's, read from the entry the intake keeps for the
 * deduplication window, or (for an event taken in by the previous version) from its day hashes
 * of acks, looked for around the repeat's own time.
 */
export async function firstAck(
  redis: HashReader,
  settings: { queuePrefix: string; dedupSeconds: number },
  { firstId, entry, repeat }: RepeatOf,
): Promise<Acknowledgement> {
  const kept =
    (await findAck(redis, entry, firstId)) ??
    (await findLegacyAck(
      redis,
      settings.queuePrefix,
      firstId,
      settings.dedupSeconds,
      Date.parse(repeat.received_at),
    ));
  if (kept) {
    // A quarantined event's problems are the repeat's own: the same bytes fail the same checks.
    const { problems, ...rest } = repeat;
    const ack = ackOf({
      ...rest,
      webhook_id: firstId,
      received_at: kept.received_at,
      actions: kept.actions as ActionName[],
      ...(kept.quarantined ? { problems: problems ?? [] } : {}),
    });
    // Discarded since: what is true now, not what the first answer said.
    return kept.discarded ? { ...ack, discarded: true } : ack;
  }
  // Without it (deleted by hand within the window) the event was still delivered: answer with
  // its id rather than run it again.
  return ackOf({ ...repeat, webhook_id: firstId });
}
