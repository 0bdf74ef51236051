// Order (docs/architecture.md → Order): for each entity and state-changing action, one call at a
// time, a call waiting its turn spending no attempt (`held: entity_busy`), other entities and
// actions not held up. The partner is the sandbox, told to hold the first call in flight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcceptedWebhook } from '@pw/shared/queue';
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
