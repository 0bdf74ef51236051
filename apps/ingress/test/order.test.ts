// Order on the sender's clock (docs/webhook-api.md → Order): an entity's events are ordered by
// their `timestamp` read on their sender's clock, which the ingress learns from the sender's recent
// events. A steady offset either way keeps an older event older; one event dated ahead of its
// sender's clock does not make the entity's later events stale. Through the ingress's own intake;
// the order shows in the outcome record's `stale` mark, which the worker's check reads the same way.
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { keys } from '@pw/shared/queue';
import { signedEvent } from '@pw/test-utils';
import { postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Posts a quote event of `id` dated `at` on the sender's clock; its webhook id. */
async function post(id: string, at: number, status = 'modified'): Promise<string> {
  const response = await postJson(
    h.app,
    '/webhooks/quote-status',
    signedEvent('quote', { id, status, now: new Date(at) }),
  );
  expect(response.status).toBe(200);
  return acknowledgementSchema.parse(response.body).webhook_id;
}

const stale = async (webhookId: string) =>
  (await h.inspect.hget(keys.outcome(h.prefix, webhookId), 'stale')) === '1';

/** A sender whose clock is `offsetMs` off the receiver's: its events are dated on it. */
async function senderWithClock(offsetMs: number) {
  const clock = () => Date.now() + offsetMs;
  // Its earlier events, of other quotes: the ingress learns its clock from them.
  for (let i = 0; i < 5; i++) await post(`warm-${offsetMs}-${i}`, clock());
  return clock;
}

describe("an entity's events, ordered on their sender's clock", () => {
  for (const [offsetMs, name] of [
    [120_000, 'ahead'],
    [-120_000, 'behind'],
  ] as const) {
    it(`a sender whose clock runs 120 s ${name}: an older event arriving after a newer one is stale`, async () => {
      h = await startHarness();
      const clock = await senderWithClock(offsetMs);
      const newer = await post(`pair-${name}`, clock(), 'approved');
      const older = await post(`pair-${name}`, clock() - 60_000, 'modified');
      expect(await stale(newer)).toBe(false);
      expect(await stale(older)).toBe(true);
      // The next event, sent after both, is not.
      expect(await stale(await post(`pair-${name}`, clock() + 1000))).toBe(false);
    });
  }

  it("one event dated ahead of its sender's clock makes none of the entity's later events stale", async () => {
    h = await startHarness();
    const clock = await senderWithClock(0);
    const ahead = await post('outlier', clock() + 250_000, 'sent');
    const later = await post('outlier', clock() + 1000, 'approved');
    expect(await stale(ahead)).toBe(false);
    expect(await stale(later)).toBe(false);
  });
});
