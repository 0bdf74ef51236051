import type { ActionName } from '../actions/action-table.js';
import type { Acknowledgement } from '../events/acknowledgement.js';
import { findAck } from '../outcomes/kept-acks.js';
import type { HashReader } from '../outcomes/kept-acks.js';
import type { WebhookJobData } from '../queue/queues.js';

/** The ack of an accepted webhook: the first delivery's, and every repeat's. */
export const ackOf = (webhook: WebhookJobData): Acknowledgement => ({
  received: true,
  processed_at: webhook.received_at,
  webhook_id: webhook.webhook_id,
  actions_triggered: webhook.actions,
});

/**
 * The ack a repeat gets: the first delivery's (`firstId`), read from the ack kept for the
 * deduplication window (`kept-acks.ts`), looked for around the repeat's own time.
 */
export async function firstAck(
  redis: HashReader,
  settings: { queuePrefix: string; dedupSeconds: number },
  firstId: string,
  repeat: WebhookJobData,
): Promise<Acknowledgement> {
  const kept = await findAck(
    redis,
    settings.queuePrefix,
    firstId,
    settings.dedupSeconds,
    Date.parse(repeat.received_at),
  );
  if (kept) {
    return ackOf({
      ...repeat,
      webhook_id: firstId,
      received_at: kept.received_at,
      actions: kept.actions as ActionName[],
    });
  }
  // Without it (deleted by hand within the window) the event was still delivered: answer with
  // its id rather than run it again.
  return ackOf({ ...repeat, webhook_id: firstId });
}
