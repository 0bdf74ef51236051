import { annotateSpan, inProducerSpan } from '@pw/shared/runtime';
import type { ActionName } from '@pw/shared/actions';
import type { EventType, Problem } from '@pw/shared/events';
import { SenderClocks, senderOf } from '@pw/shared/intake';
import type { IntakeResult, IntakeEntry, PartitionedIntake } from '@pw/shared/intake';
import { eventTime } from '@pw/shared/queue';
import type { AcceptedWebhook } from '@pw/shared/queue';

export interface IncomingWebhook {
  eventType: EventType;
  entityId: string;
  /** The event without `signature`, in the order received. */
  event: Record<string, unknown>;
  /** Its canonical JSON: equal for repeated deliveries. */
  canonical: string;
  actions: ActionName[];
  /** Present for an authentic event that failed its schema: kept, quarantined. */
  problems?: Problem[];
}

/**
 * The ingress's use of the shared intake (`PartitionedIntake`): each accepted request becomes a
 * webhook with a new id, of its entity's partition, taken in at the request's time. Webhooks that arrive together share one
 * transaction (one round trip): the first of a batch is sent once the current turn of the event
 * loop is over, so a lone request waits for nothing.
 */
export class BatchedIntake {
  private pending: IntakeEntry[] = [];
  private flushScheduled = false;

  constructor(
    private readonly intake: Pick<
      PartitionedIntake,
      'mapped' | 'ready' | 'newWebhookId' | 'prepare' | 'takeIn'
    >,
    /** The most webhooks sent to Redis in one transaction. */
    private readonly maxBatch = 256,
    /** Each sender's clock, which orders its events (docs/architecture.md → Order). */
    private readonly clocks = new SenderClocks(),
  ) {}

  /** Enqueues the webhook, or answers a repeat with its first ack (a producer span, tracing on). */
  accept(incoming: IncomingWebhook, now = new Date()): Promise<IntakeResult> {
    return inProducerSpan('enqueue actions', () =>
      // Its id names its entity's partition: the map is keyed once the partition count is claimed.
      this.intake.mapped
        ? this.enqueue(incoming, now)
        : this.intake.ready().then(() => this.enqueue(incoming, now)),
    );
  }

  private enqueue(incoming: IncomingWebhook, now: Date): Promise<IntakeResult> {
    // A quarantined event is not applied: its time orders nothing, and its clock is not learnt.
    const orderMs = incoming.problems
      ? undefined
      : this.clocks.orderTime(senderOf(incoming.event), eventTime(incoming.event), now.getTime());
    const webhook: AcceptedWebhook = {
      webhook_id: this.intake.newWebhookId(incoming.entityId || incoming.canonical),
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
      received_at: now.toISOString(),
      actions: incoming.actions,
      event: incoming.event,
      ...(orderMs === undefined ? {} : { order_ms: orderMs }),
      ...(incoming.problems ? { problems: incoming.problems } : {}),
    };
    annotateSpan({
      webhook_id: webhook.webhook_id,
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
    });
    // Prepared now, in the request's span: its action jobs carry the request's trace.
    const prepared = this.intake.prepare(webhook, incoming.canonical);
    return new Promise((resolve, reject) => {
      this.pending.push({ ...prepared, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    if (this.pending.length > 0) {
      this.flushScheduled = true;
      setImmediate(() => void this.flush());
    }
    await this.intake.takeIn(batch);
  }
}
