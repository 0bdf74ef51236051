// Order through the whole system (docs/webhook-api.md → Order): an operator's replay of an older
// event's dead letter, after a newer event of its entity completed, makes no state-changing call:
// it is stale, and the partner's state stays the newest event's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { isFinished } from '@pw/shared/outcomes';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { signEvent } from '@pw/shared/signing';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

let system: RunningSystem;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system.stop();
});

async function deliver(event: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signEvent(event, DEV_WEBHOOK_SECRET)),
  });
  expect(response.status).toBe(200);
  return acknowledgementSchema.parse(await response.json()).webhook_id;
}

/** The partner's calls of a webhook's action. */
async function callsOf(webhookId: string, action: string): Promise<number> {
  const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as {
    headers: Record<string, string>;
  }[];
  return calls.filter((call) => call.headers['idempotency-key'] === `${webhookId}:${action}`)
    .length;
}

const byName = (outcome: WebhookOutcome) =>
  new Map(outcome.actions.map((action) => [action.name, action]));

describe('a replay of an older event', () => {
  it('dead letter, after its entity’s newer event completed, is stale: no second call', async () => {
    const now = Date.now();
    // The partner refuses the older event's opportunity update once, for good: a dead letter.
    const failure = await fetch(`${system.url.api}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        path: '/sales-opportunities/by-quote/QR-replay',
        status: 400,
        times: 1,
      }),
    });
    expect(failure.status).toBe(201);
    const older = await deliver(
      sampleEvent('quote', { id: 'replay', status: 'modified', now: new Date(now - 60_000) }),
    );
    const dead = await system.outcome(older, isFinished);
    expect(byName(dead).get('update_sales_opportunity')?.state).toBe('failed');
    const newer = await deliver(
      sampleEvent('quote', { id: 'replay', status: 'rejected', now: new Date(now) }),
    );
    await system.outcome(newer, isFinished);
    expect(await callsOf(older, 'update_sales_opportunity')).toBe(1);

    const replay = await system.dashboard(`/api/webhooks/${older}/replay`, { method: 'POST' });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toMatchObject({ replayed: ['update_sales_opportunity'] });
    const replayed = await system.outcome(
      older,
      (outcome) =>
        byName(outcome).get('update_sales_opportunity')?.skipped === 'stale' && isFinished(outcome),
    );
    expect(byName(replayed).get('update_sales_opportunity')).toMatchObject({
      state: 'completed',
      skipped: 'stale',
    });
    // The partner got no second opportunity update from the older event; its newest stays.
    expect(await callsOf(older, 'update_sales_opportunity')).toBe(1);
    expect(await callsOf(newer, 'update_sales_opportunity')).toBe(1);
  });
});
