import { Counter, Gauge, Registry } from 'prom-client';

/** Where the gauges read from at each scrape. */
export interface RecorderReadings {
  /** Changes on the record stream, waiting for the store. */
  backlog: () => Promise<number>;
  /** Changes set aside on the rejected stream. */
  setAside: () => Promise<number>;
}

/** How long a scrape waits for Redis before a gauge keeps its last reading. */
const READING_TIMEOUT_MS = 1000;

/** The recorder's metrics, on `RECORDER_HEALTH_PORT`'s `/metrics`. */
export class RecorderMetrics {
  readonly registry = new Registry();
  private readings: RecorderReadings | undefined;
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
    name: 'record_changes_rejected_total',
    help: 'Record changes the store refused on their own, set aside on the rejected stream',
    registers: [this.registry],
  });
  readonly backlog = this.reading(
    'record_backlog',
    'Record changes waiting in Redis for the record store (read at each scrape)',
    'backlog',
  );
  readonly setAside = this.reading(
    'record_changes_set_aside',
    'Record changes set aside on the rejected stream, waiting for an operator to re-drive or discard them',
    'setAside',
  );
  readonly storeUp = new Gauge({
    name: 'record_store_up',
    help: '1 while the last write to the record store succeeded, 0 while it fails',
    registers: [this.registry],
  });

  /** Where the gauges read from (the recorder's streams). */
  observe(readings: RecorderReadings): void {
    this.readings = readings;
  }

  /** A gauge read at each scrape; while Redis does not answer in time it keeps its last value. */
  private reading(name: string, help: string, source: keyof RecorderReadings): Gauge {
    const read = () => this.readings?.[source]() ?? Promise.resolve(undefined);
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        const value = await withinTime(read(), READING_TIMEOUT_MS);
        if (value !== undefined) this.set(value);
      },
    });
  }
}

/** What `reading` gives within `ms`; undefined when it fails or is late. */
async function withinTime<T>(reading: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([reading.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
