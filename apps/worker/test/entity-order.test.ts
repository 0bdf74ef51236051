// Order (docs/architecture.md → Order): for each entity and state-changing action, one call at a
// time, a call waiting its turn spending no attempt (`held: entity_busy`), other entities and
// actions not held up. The partner is the sandbox, told to hold the first call in flight.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@pw/shared/queue';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { newTestRedis } from '@pw/test-utils';
import { PartnerApi } from '../src/partner-api.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

let h: WorkerHarness;
beforeAll(async () => {
  h = await startWorkerHarness();
});
afterAll(async () => {
  await h.close();
});

/** The calls made for a webhook's action. */
const callsOf = (webhook: AcceptedWebhook, action: string) =>
  h.sandbox.api.calls.filter((call) => {
    const body = call.body as { webhook_id?: string; action?: string } | null;
    return body?.webhook_id === webhook.webhook_id && body.action === action;
  });

const action = 'update_sales_opportunity';
const opportunityOf = (id: string) => `/sales-opportunities/by-quote/QR-${id}`;

describe("one entity's state-changing calls", () => {
  it('wait for the call in flight: held entity_busy, no attempt spent, then made once it is answered', async () => {
    const now = Date.now();
    const first = webhookJob('quote', 'sent', { id: 'turn-1', now: new Date(now - 1000) });
    const second = webhookJob('quote', 'modified', { id: 'turn-1', now: new Date(now) });
    const hold = h.sandbox.api.hold(opportunityOf('turn-1'));
    try {
      await h.enqueue(first);
      await hold.held(1);
      await h.enqueue(second);
      const waiting = await h.until(second.webhook_id, (outcome) =>
        outcome.actions.some((a) => a.name === action && a.held === 'entity_busy'),
      );
      expect(waiting.actions.find((a) => a.name === action)).toMatchObject({
        state: 'waiting',
        attempts: 0,
        held: 'entity_busy',
      });
      // Counted as a wait of its turn.
      const waits = await h.metrics.actionsWaitingTurn.get();
      expect(waits.values.find((v) => v.labels.action === action)?.value).toBeGreaterThan(0);
      // Its other action, which changes no state, did not wait.
      await h.until(second.webhook_id, (outcome) =>
        outcome.actions.some((a) => a.name === 'notify_customer' && a.state === 'completed'),
      );
      expect(hold.holding()).toBe(1);
    } finally {
      hold.release();
    }
    const done = await h.finished(second.webhook_id);
    expect(done.actions.find((a) => a.name === action)).toMatchObject({
      state: 'completed',
      attempts: 1,
      held: null,
    });
    await h.finished(first.webhook_id);
    const [before] = callsOf(first, action);
    const [after] = callsOf(second, action);
    expect(after!.received_at.getTime()).toBeGreaterThanOrEqual(before!.at.getTime());
  });

  it("another entity's call does not wait for it", async () => {
    const busy = webhookJob('quote', 'sent', { id: 'turn-2' });
    const other = webhookJob('quote', 'sent', { id: 'turn-3' });
    const hold = h.sandbox.api.hold(opportunityOf('turn-2'));
    try {
      await h.enqueue(busy);
      await hold.held(1);
      await h.enqueue(other);
      const done = await h.finished(other.webhook_id);
      expect(done.actions.find((a) => a.name === action)).toMatchObject({
        state: 'completed',
        held: null,
      });
      expect(hold.holding()).toBe(1);
    } finally {
      hold.release();
    }
    await h.finished(busy.webhook_id);
  });
});

describe('bursts of one entity’s events, in any order', () => {
  it('never overlap its calls, and end at the newest event’s (fast-check over arrival orders)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4 }), async (order) => {
        const id = `burst-${run++}`;
        const now = Date.now();
        const events = [0, 1, 2, 3].map((n) =>
          webhookJob('quote', 'modified', { id, now: new Date(now - 60_000 + n * 1000) }),
        );
        // Taken in at once, in the generated order.
        await Promise.all(order.map((n) => h.enqueue(events[n]!)));
        for (const event of events) await h.finished(event.webhook_id);
        const calls = events
          .flatMap((event, n) => callsOf(event, action).map((call) => ({ n, call })))
          .sort((a, b) => a.call.received_at.getTime() - b.call.received_at.getTime());
        for (let i = 1; i < calls.length; i++) {
          expect(calls[i]!.call.received_at.getTime()).toBeGreaterThanOrEqual(
            calls[i - 1]!.call.at.getTime(),
          );
        }
        expect(calls.at(-1)?.n).toBe(3);
      }),
      { numRuns: 12 },
    );
  });
});

describe('a turn whose worker died mid-call', () => {
  it('is taken by the next job once its lease has run out', async () => {
    // A lease of the job lock (1 s) and two call time-outs (0.5 s each).
    const short = await startWorkerHarness({
      lockMs: 1000,
      api: (tokens) => new PartnerApi({ tokens, timeoutMs: 500 }),
    });
    try {
      const next = webhookJob('quote', 'sent', { id: 'turn-dead' });
      // What a worker killed during its call leaves: the turn, held by its job, with its lease.
      const prefix = short.partitions.prefix(0);
      const turn = keys.turn(prefix, next.event_type, next.entity_id, action);
      const redis = newTestRedis();
      await redis.set(turn, 'wh_deadworker0000000000.update_sales_opportunity', 'PX', 2000);
      redis.disconnect();
      const heldUntil = Date.now() + 2000;
      await short.enqueue(next);
      await short.until(next.webhook_id, (outcome) =>
        outcome.actions.some((a) => a.name === action && a.held === 'entity_busy'),
      );
      const done = await short.finished(next.webhook_id);
      expect(done.actions.find((a) => a.name === action)).toMatchObject({
        state: 'completed',
        attempts: 1,
      });
      const [call] = short.sandbox.api.calls.filter(
        (c) => (c.body as { webhook_id?: string; action?: string } | null)?.action === action,
      );
      expect(call!.received_at.getTime()).toBeGreaterThanOrEqual(heldUntil - 50);
    } finally {
      await short.close();
    }
  });
});
