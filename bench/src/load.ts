import autocannon from 'autocannon';
import { EVENT_KINDS, eventDefinitionByKind, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';

export interface LoadResult {
  /** 2xx answers per second over the run. */
  acceptedPerSecond: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** Ack arrival time (ms since epoch) by webhook id, when asked for. */
  acks?: Map<string, number>;
}

/**
 * Distinct signed events of all three kinds, ready to post: a repeat would be deduplicated, so
 * none is used twice in a run.
 */
export class EventPool {
  private readonly bodies: { path: string; body: string }[] = [];
  private next = 0;
  private made = 0;
  private cursor = 0;
  private readonly run = Math.random().toString(36).slice(2, 8);
  /** Events that had to be made during a run because the pool was too small. */
  ranDry = 0;

  constructor(private readonly secret: string) {}

  /** Makes sure `count` unused events are ready. */
  fill(count: number): void {
    const missing = count - (this.bodies.length - this.next);
    this.bodies.splice(0, this.next);
    this.next = 0;
    for (let i = 0; i < missing; i++, this.made++) {
      const kind = EVENT_KINDS[this.made % EVENT_KINDS.length]!;
      const event = sampleEvent(kind, { id: `${this.run}-${this.made}` });
      this.bodies.push({
        path: eventDefinitionByKind(kind).path,
        body: JSON.stringify(signEvent(event, this.secret)),
      });
    }
  }

  /** Mean size in bytes of the events made so far that are still in the pool. */
  meanBodyBytes(): number {
    const sizes = this.bodies.map((one) => Buffer.byteLength(one.body));
    return sizes.length ? Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length) : 0;
  }

  /** Events in turn, used or not, over and over: for a target that does not deduplicate. */
  cycle(): { path: string; body: string } {
    if (this.bodies.length === 0) this.fill(1);
    this.cursor = (this.cursor + 1) % this.bodies.length;
    return this.bodies[this.cursor]!;
  }

  /** The next unused event; made on the spot (costing the load generator time) if none is left. */
  take(): { path: string; body: string } {
    if (this.next >= this.bodies.length) {
      this.ranDry++;
      this.fill(1);
    }
    return this.bodies[this.next++]!;
  }
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Requests to send in all; when set, the run lasts until they are answered, not `durationSeconds`. */
  amount?: number;
  /** Requests per second across all connections (open-ish loop); none: as fast as it goes. */
  rate?: number;
  /** Keep the arrival time of each ack, by webhook id. */
  recordAcks?: boolean;
  /** Send the pool's events over and over (for the echo, which does not deduplicate). */
  repeat?: boolean;
}

/** Drives `url` with autocannon, each request a new event from the pool. */
export async function drive(pool: EventPool, options: LoadOptions): Promise<LoadResult> {
  const acks = options.recordAcks ? new Map<string, number>() : undefined;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    overallRate: options.rate,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          const next = options.repeat ? pool.cycle() : pool.take();
          return { ...request, path: next.path, body: next.body };
        },
        onResponse: acks
          ? (status, body) => {
              if (status !== 200) return;
              const id = /"webhook_id":"([^"]+)"/.exec(body)?.[1];
              if (id && !acks.has(id)) acks.set(id, Date.now());
            }
          : undefined,
      },
    ],
  });
  return {
    // autocannon's own measure of how long the run took, not the duration asked for.
    acceptedPerSecond: Math.round(result['2xx'] / (result.duration || options.durationSeconds)),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    acks,
  };
}
