// The events the faults add to the traffic, and the partner stand-in told to fail them for good:
// a burst of one made-up customer's quotes whose every partner call is answered 500 (poison), and
// quotes whose `customer_id` holds a `/`, which the worker encodes in the path as `%2F` and the
// partner's front refuses with a 404 (an odd path, refused at once whether or not the service
// behind the front is up). While the poison runs, ordinary quotes trickle in: an input is told
// apart as poison only while the partner serves others, and a soak's own traffic ends before its
// drain.
import { randomBytes } from 'node:crypto';
import { sampleEvent } from '@pw/shared/events';
import type { PartnerApiStandIn } from '@pw/sandbox';
import { finalCount, readStore } from './checks.js';
import { deliver, soakEvent } from './traffic.js';
import type { Delivery, Purpose } from './traffic.js';

/** What the path of a call about an odd-path customer carries, and no other call's does. */
export const ODD_PATH_MARK = '%2F';

export interface FaultEventOptions {
  ingressUrls: readonly string[];
  /** When to stop trying to get an event acknowledged (epoch ms), as for the traffic. */
  giveUpAt: () => number;
  /** The first event number free after the traffic's own (the checks index events by number). */
  firstId: number;
}

/** The faults' own events, sent as the traffic's are, and kept for the checks. */
export class FaultEvents {
  /** Every event added, in the order of their numbers. */
  readonly deliveries: Delivery[] = [];
  /** The made-up customer every partner call about whom fails with a 500. */
  readonly poisonCustomer = `C-poison-${randomBytes(4).toString('hex')}`;
  private readonly pending: Promise<void>[] = [];
  private oddPaths = 0;

  constructor(private readonly options: FaultEventOptions) {}

  /**
   * Tells the partner stand-in to fail these inputs for good. Called before any outage begins: the
   * stand-in answers a call with the first failure set up that matches it, so these come first
   * and an outage set up later never answers in their place (a time-out's late 200 would apply
   * an odd path's call).
   */
  arm(api: PartnerApiStandIn): void {
    api.failNext({
      path: /./,
      carrying: ODD_PATH_MARK,
      status: 404,
      times: Infinity,
      body: 'Not Found',
    });
    api.failNext({ path: /./, carrying: this.poisonCustomer, status: 500, times: Infinity });
  }

  /** Sends `count` quotes of the poison customer at once (each its own quote). */
  poisonBurst(count: number): void {
    for (let n = 0; n < count; n++) {
      this.send('poison', { customer_id: this.poisonCustomer });
    }
  }

  /**
   * Sends `size` events of one new quote at once, dated a second apart and sent in a shuffled
   * order (`burst`): its state-changing calls must run one at a time and end at the newest's.
   */
  entityBurst(size: number): void {
    const quote = `soak-burst-${randomBytes(4).toString('hex')}`;
    const now = Date.now();
    const dated = Array.from({ length: size }, (_, n) => new Date(now - (size - n) * 1000));
    for (const at of dated.sort(() => Math.random() - 0.5)) {
      this.send('burst', sampleEvent('quote', { id: quote, status: 'approved', now: at }));
    }
  }

  /** Sends one ordinary quote (`trickle`), which the partner serves. */
  trickle(): void {
    this.send('trickle', {});
  }

  /** Whether every poison event has been acknowledged and is final in the record store. */
  async poisonFinal(storeUrl: string): Promise<boolean> {
    const poison = this.deliveries.filter((d) => d.event.purpose === 'poison');
    if (poison.some((d) => !d.ack)) return false;
    const ids = poison.map((d) => d.ack!.webhook_id);
    return finalCount(await readStore(storeUrl, ids), ids) === ids.length;
  }

  /** Sends one quote whose `customer_id` holds a `/`; returns that id. */
  oddPath(): string {
    const customerId = `C-odd/${(this.oddPaths++).toString(36)}-${randomBytes(3).toString('hex')}`;
    this.send('odd-path', { customer_id: customerId });
    return customerId;
  }

  /** Resolves once every event added has been acknowledged, or given up. */
  async settled(): Promise<Delivery[]> {
    await Promise.all(this.pending);
    return this.deliveries;
  }

  private send(purpose: Purpose, fields: Record<string, unknown>): void {
    const id = this.options.firstId + this.deliveries.length;
    const suffix = `soak-${purpose}-${id.toString(36)}-${randomBytes(3).toString('hex')}`;
    // A burst's events are whole; the others' differ from a sample quote in `fields`.
    const event =
      purpose === 'burst'
        ? fields
        : { ...sampleEvent('quote', { id: suffix, status: 'approved' }), ...fields };
    const delivery: Delivery = {
      event: soakEvent(id, 'quote', purpose, event),
      tries: 0,
      redeliveries: [],
    };
    this.deliveries.push(delivery);
    this.pending.push(deliver(delivery, this.options.ingressUrls, this.options.giveUpAt));
  }
}
