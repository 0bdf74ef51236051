// The partner's side of the soak: signed events of all three kinds at a steady rate, with
// redeliveries of events already acknowledged, pairs of one entity's events sent newest first, and
// events that fail their schema (the faults add events of their own: fault-events.ts). Like a
// partner's delivery system, each event is sent until an ingress acknowledges it (another ingress,
// or the same one later, after a refusal or no answer), and every acknowledgement is kept for the
// checks.
import { EVENT_REGISTRY, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { EventKind } from '@pw/shared/events';
import { SOAK_WEBHOOK_SECRET } from './secrets.js';

/**
 * Why an event is in the traffic: the faults add `poison` events (of a customer every partner call
 * about whom fails for good), `odd-path` ones (a `customer_id` the partner's front refuses) and
 * `trickle` ones (ordinary quotes the partner serves while the poison runs).
 */
export type Purpose =
  'plain' | 'newer' | 'older' | 'invalid' | 'poison' | 'odd-path' | 'trickle' | 'burst';

export interface SoakEvent {
  /** The driver's own number for the event. */
  id: number;
  kind: EventKind;
  purpose: Purpose;
  path: string;
  /** The signed body, sent byte for byte the same each time. */
  body: string;
}

export interface Ack {
  status: number;
  webhook_id: string;
  actions: string[];
  quarantined: boolean;
  /** The answering request's own time (ms). */
  latencyMs: number;
  /** When the answering request was sent, and when its answer came (`performance.now()`). */
  sentAt: number;
  ackedAt: number;
}

export interface Delivery {
  event: SoakEvent;
  /** The first acknowledgement; undefined when none came before the end. */
  ack?: Ack;
  /** Requests sent for the first acknowledgement. */
  tries: number;
  /** The acknowledgements of its redeliveries (the same bytes, sent again once acknowledged). */
  redeliveries: Ack[];
}

export interface TrafficOptions {
  webhooks: number;
  rate: number;
  ingressUrls: readonly string[];
  /** Share of events that fail their schema (quarantined). @defaultValue 0.04 */
  invalidShare?: number;
  /** Share of events sent again once acknowledged. @defaultValue 0.05 */
  redeliveryShare?: number;
  /** Share of events that are one of an entity's pair sent newest first. @defaultValue 0.06 */
  pairShare?: number;
}

const KINDS: EventKind[] = ['quote', 'contract', 'sales'];

/** `event` signed as the partner signs it, numbered `id`. */
export const soakEvent = (
  id: number,
  kind: EventKind,
  purpose: Purpose,
  event: Record<string, unknown>,
): SoakEvent => ({
  id,
  kind,
  purpose,
  path: EVENT_REGISTRY[event.event_type as keyof typeof EVENT_REGISTRY].path,
  body: JSON.stringify(signEvent(event, SOAK_WEBHOOK_SECRET)),
});

/** The events to send, in order: `webhooks` of them, each a webhook of its own. */
export function plan(options: TrafficOptions): SoakEvent[] {
  const invalidShare = options.invalidShare ?? 0.04;
  const pairShare = options.pairShare ?? 0.06;
  const events: SoakEvent[] = [];
  const add = (kind: EventKind, purpose: Purpose, event: Record<string, unknown>) =>
    events.push(soakEvent(events.length, kind, purpose, event));
  // Spread evenly, not at random: every run of a size sends the same mix.
  let invalidDue = 0;
  let pairDue = 0;
  while (events.length < options.webhooks) {
    const n = events.length;
    const kind = KINDS[n % KINDS.length]!;
    const id = `soak-${n.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const status = kind === 'quote' ? 'approved' : undefined;
    invalidDue += invalidShare;
    pairDue += pairShare;
    if (invalidDue >= 1) {
      invalidDue -= 1;
      add(kind, 'invalid', { ...sampleEvent(kind, { id, status }), customer_id: true });
    } else if (pairDue >= 2 && events.length + 2 <= options.webhooks) {
      pairDue -= 2;
      // The entity's newer event first, then one 30 s older: the older one is stale.
      const now = Date.now();
      add(kind, 'newer', sampleEvent(kind, { id, status, now: new Date(now) }));
      add(kind, 'older', sampleEvent(kind, { id, status, now: new Date(now - 30_000) }));
    } else {
      add(kind, 'plain', sampleEvent(kind, { id, status }));
    }
  }
  return events;
}

/** One POST: its acknowledgement, or undefined for a refusal, an error or no answer in time. */
async function post(url: string, event: SoakEvent): Promise<Ack | undefined> {
  const started = performance.now();
  try {
    const response = await fetch(`${url}${event.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: event.body,
      signal: AbortSignal.timeout(5000),
    });
    const answer = (await response.json()) as {
      webhook_id?: string;
      actions_triggered?: string[];
      quarantined?: boolean;
    };
    if ((response.status !== 200 && response.status !== 202) || !answer.webhook_id) return;
    const ackedAt = performance.now();
    return {
      status: response.status,
      webhook_id: answer.webhook_id,
      actions: answer.actions_triggered ?? [],
      quarantined: answer.quarantined === true,
      latencyMs: ackedAt - started,
      sentAt: started,
      ackedAt,
    };
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends one event until an ingress acknowledges it (each try on the next of `urls`), or
 * `giveUpAt` (epoch ms) has passed.
 */
export async function deliver(
  delivery: Delivery,
  urls: readonly string[],
  giveUpAt: () => number,
): Promise<void> {
  for (let attempt = 0; Date.now() < giveUpAt(); attempt++) {
    delivery.tries += 1;
    const ack = await post(urls[(delivery.event.id + attempt) % urls.length]!, delivery.event);
    if (ack) {
      delivery.ack = ack;
      return;
    }
    await pause(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
  }
}

/**
 * Sends `events` at `rate` per second and resolves once each has an acknowledgement (or
 * `giveUpAt`, epoch ms, has passed) and every redelivery has been answered.
 */
export async function drive(
  events: readonly SoakEvent[],
  options: TrafficOptions & { giveUpAt: () => number },
): Promise<Delivery[]> {
  const redeliveryShare = options.redeliveryShare ?? 0.05;
  const urls = options.ingressUrls;
  const deliveries: Delivery[] = events.map((event) => ({ event, tries: 0, redeliveries: [] }));
  const pending: Promise<void>[] = [];
  let redeliveryDue = 0;

  const redeliver = async (delivery: Delivery) => {
    await pause(2000);
    for (let attempt = 0; Date.now() < options.giveUpAt(); attempt++) {
      const ack = await post(
        urls[(delivery.event.id + attempt + 1) % urls.length]!,
        delivery.event,
      );
      if (ack) {
        delivery.redeliveries.push(ack);
        return;
      }
      await pause(500);
    }
  };

  const started = performance.now();
  for (const [index, delivery] of deliveries.entries()) {
    const due = started + (index * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 0) await pause(wait);
    redeliveryDue += redeliveryShare;
    const again = redeliveryDue >= 1;
    if (again) redeliveryDue -= 1;
    pending.push(
      deliver(delivery, urls, options.giveUpAt).then(() =>
        again && delivery.ack ? redeliver(delivery) : undefined,
      ),
    );
  }
  await Promise.all(pending);
  return deliveries;
}
