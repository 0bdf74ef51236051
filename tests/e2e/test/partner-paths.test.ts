// A signed event cannot steer the worker's authenticated calls to another path of the partner API
// (docs/architecture.md#actions-and-the-worker): through the real ingress, worker and sandbox
// partner API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { isFinished } from '@pw/shared/outcomes';
import { signEvent } from '@pw/shared/signing';
import type { Acknowledgement } from '@pw/shared/events';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

let system: RunningSystem;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system.stop();
});

interface SandboxCall {
  method: string;
  path: string;
  body: { webhook_id?: string; action?: string } | null;
}

/** Signs the event as the partner would and posts it to the real ingress. */
async function deliver(event: Record<string, unknown>): Promise<Acknowledgement> {
  const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signEvent(event, DEV_WEBHOOK_SECRET)),
  });
  expect(response.status).toBe(200);
  return acknowledgementSchema.parse(await response.json());
}

async function sandboxCalls(): Promise<SandboxCall[]> {
  return (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as SandboxCall[];
}

describe('path placeholders through the whole system', () => {
  it('an approved quote with quote_id ".." fails lock_price with invalid_path_value and no call leaves for it; its other actions complete', async () => {
    // A well-formed quote first: its price lock goes where it should.
    const genuine = sampleEvent('quote', { status: 'approved' });
    const genuineAck = await deliver(genuine);
    await system.outcome(genuineAck.webhook_id, isFinished);

    const steering: Record<string, unknown> = {
      ...sampleEvent('quote', { status: 'approved' }),
      quote_id: '..',
    };
    const ack = await deliver(steering);
    expect(ack.actions_triggered).toContain('lock_price');
    const outcome = await system.outcome(ack.webhook_id, isFinished);
    const byName = new Map(outcome.actions.map((action) => [action.name, action]));
    expect(byName.get('lock_price')).toMatchObject({ state: 'failed', attempts: 0 });
    expect(byName.get('lock_price')?.last_error).toMatch(/^invalid_path_value: /);
    expect(byName.get('notify_customer')).toMatchObject({ state: 'completed', last_error: null });
    expect(byName.get('update_sales_opportunity')?.state).toBe('completed');

    const calls = await sandboxCalls();
    // Every price lock the partner saw is the genuine quote's, at its own path.
    expect(calls.filter((call) => call.path.includes('price-lock'))).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: `/quotes/${String(genuine.quote_id)}/price-lock`,
        body: expect.objectContaining({ webhook_id: genuineAck.webhook_id }) as unknown,
      }),
    ]);
    const steered = calls.filter((call) => call.body?.webhook_id === ack.webhook_id);
    expect(steered.map((call) => call.path).sort()).toEqual(
      [
        `/customers/${String(steering.customer_id)}/notifications`,
        `/sales-opportunities/by-quote/${String(steering.quote_ref_code)}`,
      ].sort(),
    );
  });
});
