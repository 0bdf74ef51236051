// The sender clocks the ingress orders an entity's events by (docs/architecture.md → Order), as
// properties over generated senders: whatever steady offset (up to MAX_CLOCK_SKEW_SECONDS either
// way) and delivery delays, an event sent later orders later; one event dated ahead of its
// sender's clock never orders after the events sent after it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SenderClocks } from '@pw/shared/intake';

/** A prompt delivery's delay at most; a retried one may come 10 minutes late. */
const MAX_DELAY = 2000;

const sender = fc
  .record({
    offsetMs: fc.integer({ min: -300_000, max: 300_000 }),
    /** Gaps between sends (ms) and each event's delivery delay: prompt, or retried much later. */
    events: fc.array(
      fc.record({
        gap: fc.integer({ min: 1, max: 10_000 }),
        delay: fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: 0, max: MAX_DELAY }) },
          { weight: 1, arbitrary: fc.integer({ min: MAX_DELAY, max: 600_000 }) },
        ),
      }),
      { minLength: 8, maxLength: 60 },
    ),
  })
  // Most of a sender's deliveries are prompt: its clock is learnt from them.
  .filter(
    ({ events }) => events.filter((e) => e.delay <= MAX_DELAY).length * 3 > events.length * 2,
  );

/** Each event's send time (receiver's clock), `timestamp` (sender's clock) and arrival. */
function deliveries(offsetMs: number, events: { gap: number; delay: number }[]) {
  let sent = 1_800_000_000_000;
  return events.map(({ gap, delay }, index) => {
    sent += gap;
    return { index, sent, timestamp: sent - offsetMs, arrival: sent + delay };
  });
}

describe('sender clocks', () => {
  it('order an entity’s events as their sender sent them, whatever its clock’s steady offset', () => {
    fc.assert(
      fc.property(sender, ({ offsetMs, events }) => {
        const clocks = new SenderClocks();
        const order = new Map<number, number>();
        const sent = deliveries(offsetMs, events);
        const byArrival = [...sent].sort((a, b) => a.arrival - b.arrival);
        for (const event of byArrival) {
          order.set(event.index, clocks.orderTime('partner', event.timestamp, event.arrival)!);
        }
        // Once the clock is learnt (from the first 3 to arrive), any two sent further apart than
        // twice a prompt delivery's delay order as they were sent, however late either arrived.
        const learnt = byArrival.slice(3);
        for (const a of learnt) {
          for (const b of learnt) {
            if (b.sent - a.sent > 2 * MAX_DELAY)
              expect(order.get(a.index)!).toBeLessThan(order.get(b.index)!);
          }
        }
      }),
    );
  });

  it('never let one event dated ahead of its sender’s clock order after events sent after it', () => {
    fc.assert(
      fc.property(
        sender,
        fc.integer({ min: 1000, max: 300_000 }),
        fc.nat(),
        ({ offsetMs, events }, aheadMs, pick) => {
          const clocks = new SenderClocks();
          const sent = deliveries(offsetMs, events);
          const outlier = 3 + (pick % (sent.length - 3));
          let outlierOrder = 0;
          for (const event of sent) {
            const timestamp = event.index === outlier ? event.timestamp + aheadMs : event.timestamp;
            const time = clocks.orderTime('partner', timestamp, event.arrival)!;
            if (event.index === outlier) outlierOrder = time;
            // Sent after the outlier arrived: never older than it.
            if (event.index > outlier && event.sent > sent[outlier]!.arrival + MAX_DELAY) {
              expect(time).toBeGreaterThan(outlierOrder);
            }
          }
        },
      ),
    );
  });
});

describe('sender clocks, learnt and forgotten', () => {
  it('starts from a clock published before, which its own later deliveries do not raise', () => {
    const clocks = new SenderClocks();
    clocks.seed([{ sender: 'partner', offset_ms: -120_000, samples: 50, at: '' }]);
    // Its first event after a restart is read on the published clock.
    expect(clocks.orderTime('partner', 1_000_120_000, 1_000_000_500)).toBe(1_000_000_000);
    // A loaded process's own deliveries, each two seconds late, leave the clock as published.
    for (let i = 1; i <= 5; i++) {
      clocks.orderTime('partner', 1_000_120_000 + i * 1000, 1_000_002_000 + i * 1000);
    }
    expect(clocks.snapshot()[0]).toMatchObject({ offset_ms: -120_000, samples: 6 });
  });

  it('reads a clock set anew off the last hour of deliveries alone', () => {
    const clocks = new SenderClocks();
    const start = 1_800_000_000_000;
    const seen: (number | undefined)[] = [];
    // Two events a minute, on time for 70 minutes, then with the clock set back five seconds.
    for (let minute = 0; minute < 132; minute++) {
      for (const second of [0, 30]) {
        const arrival = start + minute * 60_000 + second * 1000;
        clocks.orderTime('partner', minute < 70 ? arrival : arrival - 5000, arrival + 20);
      }
      seen.push(clocks.snapshot()[0]?.offset_ms);
    }
    // The on-time minutes count until an hour after their own, then no more.
    expect(seen.slice(127, 131)).toEqual([20, 20, 5020, 5020]);
  });

  it('learns the clock of a sender seldom heard from its last few events, however old', () => {
    const clocks = new SenderClocks();
    const start = 1_800_000_000_000;
    for (let i = 0; i < 4; i++) {
      const arrival = start + i * 1_800_000;
      clocks.orderTime('partner', arrival - 120_000, arrival + 10);
    }
    expect(clocks.snapshot()[0]).toMatchObject({ offset_ms: 120_010, samples: 3 });
  });

  it('forgets a published clock an hour after it was published', () => {
    const clocks = new SenderClocks();
    const published = 1_800_000_000_000;
    clocks.seed([
      { sender: 'partner', offset_ms: 0, samples: 9, at: new Date(published).toISOString() },
    ]);
    // Every event here two seconds late: the published clock holds while it is fresh.
    const late = (at: number) => clocks.orderTime('partner', at - 2000, at);
    for (let i = 0; i < 3; i++) late(published + 60_000 + i);
    expect(clocks.snapshot()[0]?.offset_ms).toBe(0);
    for (let i = 0; i < 3; i++) late(published + 3_660_000 + i);
    expect(clocks.snapshot()[0]?.offset_ms).toBe(2000);
  });

  it("keeps its minutes in order when the receiver's clock is set back", () => {
    const clocks = new SenderClocks();
    const start = 1_800_000_000_000;
    for (let i = 0; i < 5; i++) clocks.orderTime('partner', start + i, start + i + 10);
    // An hour back: still read on the clock learnt, and the minutes it had still count.
    const back = start - 3_600_000;
    expect(clocks.orderTime('partner', back, back + 10)).toBe(back + 10);
    expect(clocks.snapshot()[0]).toMatchObject({ offset_ms: 10, samples: 6 });
    expect(() => new SenderClocks({ horizonMs: 0 })).toThrow(RangeError);
  });

  it('keeps at most its bound of senders, forgetting the least recently seen', () => {
    const clocks = new SenderClocks({ maxSenders: 2 });
    for (const name of ['a', 'b', 'a', 'c']) {
      for (let i = 0; i < 3; i++) clocks.orderTime(name, 1000 + i, 2000 + i);
    }
    expect(clocks.snapshot().map((clock) => clock.sender)).toEqual(['a', 'c']);
  });
});

describe('sender clocks, events sent together', () => {
  it('order events sent together as they were dated, whatever order they arrive in', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -300_000, max: 300_000 }),
        // The sender's deliveries before, most late by half a second to MAX_DELAY (a loaded
        // sender), one in five at least within half a second: a sender always a second late
        // cannot be told from a clock a second behind.
        fc
          .array(
            fc.oneof(
              { weight: 1, arbitrary: fc.integer({ min: 0, max: 500 }) },
              { weight: 3, arbitrary: fc.integer({ min: 500, max: MAX_DELAY }) },
            ),
            { minLength: 20, maxLength: 120 },
          )
          .filter((delays) => delays.filter((delay) => delay <= 500).length * 5 >= delays.length),
        // Then five events dated a second apart, sent at once, arriving in this order.
        fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: 5 }),
        fc.integer({ min: 0, max: MAX_DELAY }),
        (offsetMs, delays, arrivalOrder, burstDelay) => {
          const clocks = new SenderClocks();
          let sent = 1_800_000_000_000;
          for (const delay of delays) {
            sent += 100;
            clocks.orderTime('partner', sent - offsetMs, sent + delay);
          }
          sent += 10_000;
          const order = new Map<number, number>();
          arrivalOrder.forEach((k, position) => {
            const dated = sent - (4 - k) * 1000 - offsetMs;
            order.set(k, clocks.orderTime('partner', dated, sent + burstDelay + position)!);
          });
          for (let k = 1; k < 5; k++) expect(order.get(k)!).toBeGreaterThan(order.get(k - 1)!);
        },
      ),
    );
  });
});

/** Five events dated a second apart, sent at once at `sent`, arriving `delay` later in `order`. */
function burstAt(sent: number, offsetMs: number, order: number[], delay: number) {
  return order.map((k, position) => ({
    k,
    timestamp: sent - (4 - k) * 1000 - offsetMs,
    arrival: sent + delay + position,
  }));
}

const expectDated = (order: Map<number, number>) => {
  for (let k = 1; k < 5; k++) expect(order.get(k)!).toBeGreaterThan(order.get(k - 1)!);
};

describe('sender clocks, after a stretch of late deliveries', () => {
  it('order a burst as dated once prompt deliveries return, however many late ones came between', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -300_000, max: 300_000 }),
        // Prompt deliveries, then an outage's: every one late by seconds (the sender retrying),
        // more of them than the estimate's samples once were.
        fc.integer({ min: 10, max: 60 }),
        fc.array(fc.integer({ min: 2000, max: 30_000 }), { minLength: 120, maxLength: 400 }),
        fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: 5 }),
        fc.integer({ min: 0, max: 300 }),
        (offsetMs, prompt, late, arrivalOrder, burstDelay) => {
          const clocks = new SenderClocks();
          let sent = 1_800_000_000_000;
          for (let i = 0; i < prompt; i++) {
            sent += 100;
            clocks.orderTime('partner', sent - offsetMs, sent + (i % 50));
          }
          for (const delay of late) {
            sent += 100;
            clocks.orderTime('partner', sent - offsetMs, sent + delay);
          }
          const order = new Map<number, number>();
          for (const e of burstAt(sent + 1000, offsetMs, arrivalOrder, burstDelay)) {
            order.set(e.k, clocks.orderTime('partner', e.timestamp, e.arrival)!);
          }
          expectDated(order);
        },
      ),
    );
  });

  it('order a burst as dated across two ingress processes, one restarted and loaded', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -300_000, max: 300_000 }),
        // Which process each delivery goes to; the second restarts once, from the clocks
        // published before, and from then on is loaded: its deliveries late by a second or more.
        fc.array(fc.boolean(), { minLength: 40, maxLength: 300 }),
        fc.integer({ min: 10, max: 39 }),
        fc.integer({ min: 1000, max: 5000 }),
        fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: 5 }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        (offsetMs, toSecond, restartAt, load, arrivalOrder, burstToSecond) => {
          const processes = [new SenderClocks(), new SenderClocks()];
          const delayAt = (second: boolean, i: number) =>
            second && i >= restartAt ? load + (i % 7) * 100 : i % 50;
          let sent = 1_800_000_000_000;
          // The first ten alternate: each process knows the clock before the restart.
          toSecond.forEach((chosen, i) => {
            const second = i < 10 ? i % 2 === 1 : chosen;
            if (i === restartAt) {
              processes[1] = new SenderClocks();
              processes[1].seed(processes[0]!.snapshot(new Date(sent)));
            }
            sent += 100;
            const clocks = processes[second ? 1 : 0]!;
            clocks.orderTime('partner', sent - offsetMs, sent + delayAt(second, i));
          });
          const order = new Map<number, number>();
          for (const e of burstAt(sent + 1000, offsetMs, arrivalOrder, 0)) {
            const second = burstToSecond[e.k]!;
            const arrival = e.arrival + delayAt(second, toSecond.length);
            order.set(e.k, processes[second ? 1 : 0]!.orderTime('partner', e.timestamp, arrival)!);
          }
          expectDated(order);
        },
      ),
    );
  });
});
