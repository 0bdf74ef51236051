// Fault: a failover behind one address. The system's Redis address (here a TCP proxy, as a DNS name
// or a virtual address would be) moves from the master to its promoted replica, and the old master
// becomes a replica: connections made before still reach it, and every write there is refused
// with READONLY. Each process reconnects on READONLY (docs/operations.md → Failover), so the
// ingress accepts again and the worker runs what it accepts, within seconds; a call in flight
// across the failover is recorded completed once, its end sent again where the address leads.
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

/** Posts a new signed quote event: the status and, when accepted, the webhook id and actions. */
async function post(): Promise<{ status: number; webhookId?: string; actions?: string[] }> {
  const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(
      signEvent(sampleEvent('quote', { status: 'approved' }), DEV_WEBHOOK_SECRET),
    ),
    signal: AbortSignal.timeout(10_000),
  });
  const body: unknown = await response.json();
  if (response.status !== 200) return { status: response.status };
  const ack = acknowledgementSchema.parse(body);
  return { status: 200, webhookId: ack.webhook_id, actions: ack.actions_triggered };
}

/** The sandbox partner's holds (`/__sandbox/holds`): calls left in flight until released. */
const holds = (method: string, body?: unknown) =>
  fetch(`${system.url.api}/__sandbox/holds`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const holding = async () => ((await (await holds('GET')).json()) as { holding: number }).holding;

/** The partner calls made for a webhook (their `Idempotency-Key` starts with its id). */
async function callsFor(webhookId: string) {
  const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as {
    headers: { 'idempotency-key'?: string };
  }[];
  return calls.filter((call) => call.headers['idempotency-key']?.startsWith(`${webhookId}:`));
}

/** Its outcome, once completed, as the dashboard reads it (its Redis is behind the address too). */
const finished = (webhookId: string) =>
  system.poll<WebhookOutcome>(
    `/api/webhooks/${webhookId}`,
    (outcome) => outcome.state === 'completed',
  );

describe('a failover behind the Redis address', { timeout: 90_000 }, () => {
  it('the ingress accepts again, the worker runs what it accepts, and a call in flight is recorded as made', async () => {
    const before = await post();
    expect(before.status).toBe(200);
    await finished(before.webhookId!);
    // Calls in flight across the failover: their ends meet READONLY on the old master.
    expect((await holds('POST', { pathPattern: '.*' })).status).toBe(201);
    const during = await post();
    expect(during.status).toBe(200);
    await expect.poll(holding, { timeout: 10_000 }).toBe(during.actions!.length);

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

    // The held calls answer. A job whose move to completed met READONLY is run again by BullMQ
    // (the same Idempotency-Key): each action ends completed, its attempts the calls made for it.
    expect((await holds('DELETE')).status).toBe(200);
    const ended = await finished(during.webhookId!);
    const calls = await callsFor(during.webhookId!);
    expect(ended.actions.map((action) => [action.name, action.state, action.attempts])).toEqual(
      during.actions!.map((name) => [
        name,
        'completed',
        calls.filter((call) => call.headers['idempotency-key'] === `${during.webhookId}:${name}`)
          .length,
      ]),
    );

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
