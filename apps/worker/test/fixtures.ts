import { EVENT_REGISTRY, eventDefinitionByKind, sampleEvent } from '@pw/shared/events';
import { newWebhookId } from '@pw/shared/queue';
import { DEFAULT_RULES, selectActions } from '@pw/shared/rules';
import type { EventKind } from '@pw/shared/events';
import type { AcceptedWebhook } from '@pw/shared/queue';

/**
 * A webhook as the ingress makes it of a request (a new id, the time taken in), with the default
 * rules' actions; `id` and `now` fix the entity and the event's `timestamp` (for several events
 * about one entity).
 */
export function webhookJob(
  kind: EventKind,
  status?: string,
  options: { id?: string; now?: Date } = {},
): AcceptedWebhook {
  const definition = eventDefinitionByKind(kind);
  const event = sampleEvent(kind, { status, ...options });
  return {
    webhook_id: newWebhookId(),
    event_type: definition.type,
    entity_id: String(event[EVENT_REGISTRY[definition.type].entityIdField]),
    received_at: new Date().toISOString(),
    actions: selectActions(definition.type, event, DEFAULT_RULES),
    event,
  };
}
