import autocannon from 'autocannon';
import { EVENT_KINDS, eventDefinitionByKind, sampleEvent, signEvent } from '@pw/shared';

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
  private readonly run = Math.random().toString(36).slice(2, 8);

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

  take(): { path: string; body: string } {
    const one = this.bodies[this.next++];
    if (!one) throw new Error('the event pool ran dry: raise its size');
    return one;
  }
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Requests per second across all connections (open-ish loop); none: as fast as it goes. */
  rate?: number;
  /** Keep the arrival time of each ack, by webhook id. */
  recordAcks?: boolean;
}

/** Drives `url` with autocannon, each request a new event from the pool. */
export async function drive(pool: EventPool, options: LoadOptions): Promise<LoadResult> {
  const acks = options.recordAcks ? new Map<string, number>() : undefined;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    overallRate: options.rate,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          const next = pool.take();
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
    acceptedPerSecond: Math.round(result['2xx'] / options.durationSeconds),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    acks,
  };
}
