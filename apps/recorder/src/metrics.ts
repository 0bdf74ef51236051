import { Counter, Gauge, Registry } from 'prom-client';

/** The recorder's metrics, on `RECORDER_HEALTH_PORT`'s `/metrics`. */
export class RecorderMetrics {
  readonly registry = new Registry();
  readonly written = new Counter({
    name: 'records_written_total',
    help: 'Record changes written to the record store',
    registers: [this.registry],
  });
  readonly batches = new Counter({
    name: 'record_batches_total',
    help: 'Batches the recorder tried to write, by outcome (written, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: 'records_rejected_total',
    help: 'Record changes the store refused on their own (kept on the rejected stream)',
    registers: [this.registry],
  });
  readonly backlog = new Gauge({
    name: 'record_backlog',
    help: 'Record changes waiting in Redis for the record store',
    registers: [this.registry],
  });
  readonly storeUp = new Gauge({
    name: 'record_store_up',
    help: '1 while the last write to the record store succeeded, 0 while it fails',
    registers: [this.registry],
  });
}
