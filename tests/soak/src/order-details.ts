// What a failed soak says about an entity whose last state-changing call was not its newest
// event's, read before the system stops: each of the entity's events, oldest first by its
// `timestamp`, with the time the ingress ordered it by (`order_ms`), its action's record and the
// partner calls made for it. A line each.
import type { Queue } from 'bullmq';
import type { RecordedCall } from '@pw/sandbox';
import { EVENT_REGISTRY } from '@pw/shared/events';
import type { EventType } from '@pw/shared/events';
import { actionJobId } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import type { Store } from './checks.js';
import { withActionsQueue } from './stuck-details.js';
import type { SoakSystem } from './system.js';
import type { Delivery } from './traffic.js';

/** At most this many entities are described. */
const DESCRIBED = 3;

/** `<event type> <entity id>`, as the order check names an entity. */
function entityOf(delivery: Delivery): string {
  const event = JSON.parse(delivery.event.body) as Record<string, unknown>;
  const definition = EVENT_REGISTRY[event.event_type as EventType];
  return definition ? `${definition.type} ${String(event[definition.entityIdField])}` : '';
}

const timestampOf = (delivery: Delivery) =>
  String((JSON.parse(delivery.event.body) as { timestamp?: unknown }).timestamp);

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** One event of the entity and its action: order, outcome, partner calls. */
async function eventView(
  queue: Queue<ActionJobData>,
  delivery: Delivery,
  action: string,
  calls: readonly RecordedCall[],
  store: Store,
) {
  const webhookId = delivery.ack!.webhook_id;
  const job = await queue.getJob(actionJobId(webhookId, action));
  const key = `${webhookId}:${action}`;
  return {
    webhook_id: webhookId,
    timestamp: timestampOf(delivery),
    stored: store.actions.find((row) => row.webhook_id === webhookId && row.name === action),
    // Kept RECORD_TTL_SECONDS after it completed: a long `--record-ttl` keeps it for this.
    order_ms: iso(job?.data.order_ms),
    job: job && {
      state: await job.getState(),
      attempts_made: job.attemptsMade,
      stalled: job.stalledCounter,
      returned: job.returnvalue as unknown,
      failed_reason: job.failedReason,
    },
    calls: calls
      .filter((call) => call.headers['idempotency-key'] === key)
      .map((call) => `${call.status} ${iso(+call.received_at)} to ${iso(+call.at)}`),
  };
}

/** The first few of `backwards` (`<event type> <entity id> <action>`), a line of JSON each. */
export async function backwardsDetails(
  system: SoakSystem,
  backwards: readonly string[],
  deliveries: readonly Delivery[],
  calls: readonly RecordedCall[],
  store: Store,
): Promise<string[]> {
  if (backwards.length === 0) return [];
  return withActionsQueue(system, (queue) =>
    Promise.all(
      backwards.slice(0, DESCRIBED).map(async (key) => {
        const action = key.slice(key.lastIndexOf(' ') + 1);
        const entity = key.slice(0, key.lastIndexOf(' '));
        const events = deliveries
          .filter((delivery) => delivery.ack && entityOf(delivery) === entity)
          .sort((a, b) => Date.parse(timestampOf(a)) - Date.parse(timestampOf(b)));
        const views = await Promise.all(
          events.map((delivery) => eventView(queue, delivery, action, calls, store)),
        );
        return `backwards ${key}: ${JSON.stringify(views)}`;
      }),
    ),
  );
}
