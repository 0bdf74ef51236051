// Fault: a failover behind one address. The system's Redis address (here a TCP proxy, as a DNS name
// or a virtual address would be) moves from the master to its promoted replica, and the old master
// becomes a replica: connections made before still reach it, and every write there is refused
// with READONLY. Each process reconnects on READONLY (docs/operations.md → Failover), so the
// ingress accepts again and the worker runs what it accepts, within seconds.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { keys } from '@pw/shared/queue';
import { signEvent } from '@pw/shared/signing';
import { PrivateRedis, startTcpProxy } from '@pw/test-utils';
import type { TcpProxy } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

let master: PrivateRedis;
let replica: PrivateRedis;
let address: TcpProxy;
let system: RunningSystem;

beforeAll(async () => {
  master = await PrivateRedis.start();
  replica = await PrivateRedis.start({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
  await replica.linkedToMaster();
  address = await startTcpProxy({ host: '127.0.0.1', port: master.port });
  system = await startSystem({
    REDIS_URL: `redis://127.0.0.1:${address.port}`,
    ACTION_BACKOFF: 'fixed',
    ACTION_BACKOFF_DELAY_MS: '200',
  });
}, 120_000);
afterAll(async () => {
  await system?.stop();
  await address?.close();
  await replica?.destroy();
  await master?.destroy();
});

/** Posts a new signed quote event: the status and, when accepted, the webhook id. */
async function post(): Promise<{ status: number; webhookId?: string }> {
  const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(
      signEvent(sampleEvent('quote', { status: 'approved' }), DEV_WEBHOOK_SECRET),
    ),
    signal: AbortSignal.timeout(10_000),
  });
  const body: unknown = await response.json();
  return response.status === 200
    ? { status: 200, webhookId: acknowledgementSchema.parse(body).webhook_id }
    : { status: response.status };
}

/** Its outcome, once completed, as the dashboard reads it (its Redis is behind the address too). */
const finished = (webhookId: string) =>
  system.poll<WebhookOutcome>(
    `/api/webhooks/${webhookId}`,
    (outcome) => outcome.state === 'completed',
  );

describe('a failover behind the Redis address', { timeout: 90_000 }, () => {
  it('the ingress accepts again and the worker runs what it accepts, within seconds', async () => {
    const before = await post();
    expect(before.status).toBe(200);
    await finished(before.webhookId!);

    // The replica has every write, is promoted, and the old master follows it; the address moves.
    const old = master.client();
    expect(await old.wait(1, 5000)).toBe(1);
    const promoted = replica.client();
    await promoted.replicaof('NO', 'ONE');
    await old.replicaof('127.0.0.1', replica.port);
    address.retarget({ host: '127.0.0.1', port: replica.port });
    // A write on the old master, through a connection made before, is refused now.
    await expect(old.set('pw-failover-probe', '1')).rejects.toThrow(/READONLY/);
    old.disconnect();

    const deadline = Date.now() + 20_000;
    let after = await post();
    while (after.status !== 200 && Date.now() < deadline) {
      // Refused (503) while the ingress's connection is being made again: a sender retries.
      await delay(100);
      after = await post();
    }
    expect(after.status).toBe(200);
    await finished(after.webhookId!);
    // It was written where the address now leads.
    expect(await promoted.exists(keys.outcome(system.env.QUEUE_PREFIX!, after.webhookId!))).toBe(1);
    promoted.disconnect();
  });
});
