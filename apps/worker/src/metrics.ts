import { Counter, Histogram, Registry } from 'prom-client';

/** The worker's Prometheus metrics, on a registry of its own. */
export class WorkerMetrics {
  readonly registry: Registry;
  readonly actions: Counter<'action' | 'outcome'>;
  readonly actionSeconds: Histogram<'action'>;
  readonly tokenRequests: Counter<'outcome'>;
  readonly webhooks: Counter<'event_type'>;
  readonly actionsThrottled: Counter<'action'>;

  constructor(registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    this.actions = new Counter({
      name: 'actions_total',
      help: 'Action attempts by action and outcome (completed, retrying, failed, skipped_stale, skipped_disabled)',
      labelNames: ['action', 'outcome'],
      registers,
    });
    this.actionSeconds = new Histogram({
      name: 'action_duration_seconds',
      help: 'Time an action attempt took, partner-API call included',
      labelNames: ['action'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.tokenRequests = new Counter({
      name: 'token_requests_total',
      help: 'Requests to the identity provider by outcome (success, failure)',
      labelNames: ['outcome'],
      registers,
    });
    this.webhooks = new Counter({
      name: 'webhooks_dispatched_total',
      help: 'Webhooks whose actions were queued, by event type',
      labelNames: ['event_type'],
      registers,
    });
    this.actionsThrottled = new Counter({
      name: 'actions_throttled_total',
      help: 'Times an action waited for its rate_limit or max_concurrent slot in ACTIONS_CONFIG',
      labelNames: ['action'],
      registers,
    });
  }
}
