// The order check (docs/architecture.md → Order): for every entity and state-changing action, the
// partner's calls that it applied came one at a time, and the last of them was the entity's newest
// event's, whatever the faults and however the events arrived.
import { ACTION_SPECS, isActionName } from '@pw/shared/actions';
import { EVENT_REGISTRY } from '@pw/shared/events';
import type { EventType } from '@pw/shared/events';
import type { RecordedCall } from '@pw/sandbox';
import type { Delivery } from './traffic.js';

export interface OrderFindings {
  /** Entities and state-changing actions the partner applied calls of. */
  entities: number;
  /** Those whose last applied call was not the newest event's (entity, action). */
  backwards: string[];
  /**
   * Calls of one entity and action that started while the one before was still in flight, that
   * one not timed out (a call whose answer the worker gave up on ends its turn).
   */
  overlapping: string[];
}

/** The entity of a delivered event (`event_type` and its entity id) and its `timestamp` (ms). */
function eventOf(delivery: Delivery): { entity: string; time: number } | undefined {
  const event = JSON.parse(delivery.event.body) as Record<string, unknown>;
  const definition = EVENT_REGISTRY[event.event_type as EventType];
  const time = Date.parse(String(event.timestamp));
  if (!definition || Number.isNaN(time)) return undefined;
  return { entity: `${definition.type} ${String(event[definition.entityIdField])}`, time };
}

interface Applied {
  call: RecordedCall;
  time: number;
  webhookId: string;
}

/** The applied state-changing calls, by entity and action, each with its event's time. */
function appliedByEntity(deliveries: readonly Delivery[], calls: readonly RecordedCall[]) {
  const events = new Map<string, { entity: string; time: number }>();
  for (const delivery of deliveries) {
    const event = delivery.ack && eventOf(delivery);
    if (event) events.set(delivery.ack!.webhook_id, event);
  }
  const groups = new Map<string, Applied[]>();
  for (const call of calls) {
    const [webhookId = '', action = ''] = (call.headers['idempotency-key'] ?? '').split(':');
    const event = events.get(webhookId);
    if (!event || call.status < 200 || call.status >= 300) continue;
    if (!isActionName(action) || !ACTION_SPECS[action].changesState) continue;
    const key = `${event.entity} ${action}`;
    groups.set(key, [...(groups.get(key) ?? []), { call, time: event.time, webhookId }]);
  }
  return groups;
}

/** The order check over what was delivered and the calls the partner got. */
export function orderFindings(
  deliveries: readonly Delivery[],
  calls: readonly RecordedCall[],
  apiTimeoutMs: number,
): OrderFindings {
  const found: OrderFindings = { entities: 0, backwards: [], overlapping: [] };
  for (const [key, applied] of appliedByEntity(deliveries, calls)) {
    found.entities += 1;
    const byStart = applied.sort(
      (a, b) => a.call.received_at.getTime() - b.call.received_at.getTime(),
    );
    const newest = Math.max(...byStart.map((a) => a.time));
    if (byStart.at(-1)!.time !== newest) found.backwards.push(key);
    for (let i = 1; i < byStart.length; i++) {
      const before = byStart[i - 1]!.call;
      const lasted = before.at.getTime() - before.received_at.getTime();
      const startedDuring = byStart[i]!.call.received_at.getTime() < before.at.getTime();
      const differ = byStart[i]!.webhookId !== byStart[i - 1]!.webhookId;
      if (startedDuring && differ && lasted < apiTimeoutMs) found.overlapping.push(key);
    }
  }
  return found;
}
