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

  it('starts from a clock published before, until it has seen enough events of its own', () => {
    const clocks = new SenderClocks();
    clocks.seed([{ sender: 'partner', offset_ms: -120_000, samples: 50, at: '' }]);
    // Its first event after a restart is read on the published clock.
    expect(clocks.orderTime('partner', 1_000_120_000, 1_000_000_500)).toBe(1_000_000_000);
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
