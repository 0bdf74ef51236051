import { sampleEvent, signEvent } from '@pw/shared';
import type { EventKind, SampleOptions, WebhookJobData } from '@pw/shared';

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

/**
 * A webhook job at its plainest, for tests of what is done with jobs rather than events: one
 * quote, entity `Q-1`, one action (`notify_customer`), an empty event; `fields` replace any of it.
 * `apps/worker/test/fixtures.ts`'s `webhookJob` is the one with a real event and its actions.
 */
export function plainWebhookJob(
  webhookId: string,
  fields: Partial<WebhookJobData> = {},
): WebhookJobData {
  return {
    webhook_id: webhookId,
    event_type: 'quote.status_changed',
    entity_id: 'Q-1',
    received_at: new Date().toISOString(),
    actions: ['notify_customer'],
    event: {},
    ...fields,
  };
}
