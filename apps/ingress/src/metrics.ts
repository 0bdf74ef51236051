import { Counter, Histogram, Registry } from 'prom-client';

/** The ingress's Prometheus metrics, on a registry of its own (tests get a fresh one each). */
export class IngressMetrics {
  readonly registry: Registry;
  readonly received: Counter<'event_type' | 'outcome'>;
  readonly ackSeconds: Histogram<'event_type' | 'outcome'>;
  readonly quarantined: Counter<'event_type'>;

  constructor(registry = new Registry()) {
    this.registry = registry;
    this.received = new Counter({
      name: 'webhooks_received_total',
      help:
        'Webhook requests by event type and outcome: accepted, quarantined, duplicate, unconfirmed (503: not ' +
        'confirmed in time, may have been enqueued, the sender retries), or the code it was refused with',
      labelNames: ['event_type', 'outcome'],
      registers: [registry],
    });
    this.quarantined = new Counter({
      name: 'webhooks_quarantined_total',
      help: 'Authentic events that failed their schema, kept and answered 202 (INVALID_EVENTS=quarantine), by event type; repeats not counted',
      labelNames: ['event_type'],
      registers: [registry],
    });
    this.ackSeconds = new Histogram({
      name: 'webhook_response_seconds',
      help: 'Time from request to answer, by event type and outcome',
      labelNames: ['event_type', 'outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  }
}
