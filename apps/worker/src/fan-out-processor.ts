import type { Job, Queue } from 'bullmq';
import { actionJobs, annotateSpan } from '@pw/shared';
import type {
  ActionJobData,
  ActionsConfig,
  Logger,
  OutcomeStore,
  RetryDefaults,
  WebhookJobData,
} from '@pw/shared';
import type { EventOrder } from './event-order.js';
import type { WorkerMetrics } from './metrics.js';

export interface FanOutDeps {
  actionsQueue: Queue<ActionJobData>;
  order: EventOrder;
  outcomes: OutcomeStore;
  actionsConfig: ActionsConfig;
  retry: RetryDefaults;
  metrics: WorkerMetrics;
  log: Logger;
}

/**
 * The `webhooks` processor: notes the event's time for its entity, opens its outcome record and
 * adds one job per action to the `actions` queue.
 */
export async function fanOutWebhook(job: Job<WebhookJobData>, deps: FanOutDeps): Promise<void> {
  const { data } = job;
  annotateSpan({
    webhook_id: data.webhook_id,
    event_type: data.event_type,
    entity_id: data.entity_id,
  });
  const stale = await deps.order.takeIn(
    data.event_type,
    data.entity_id,
    data.event,
    data.received_at,
  );
  await deps.outcomes.open(data, stale);
  await deps.actionsQueue.addBulk(actionJobs(data, deps.actionsConfig, deps.retry));
  deps.metrics.webhooks.inc({ event_type: data.event_type });
  deps.log.info(
    { webhook_id: data.webhook_id, job_id: job.id, actions: data.actions },
    'actions queued',
  );
}
