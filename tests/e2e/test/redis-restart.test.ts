// Fault: Redis (append-only file on) stopped and started again while 500 signed events are posted.
// Every event that got 200 is processed; every one that got 503 is accepted when re-sent, then
// processed; and an action is called at most twice (at least once, same Idempotency-Key).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { isFinished, OutcomeStore } from '@pw/shared/outcomes';
import { signEvent } from '@pw/shared/signing';
import { PrivateRedis } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

const EVENTS = 500;
let redis: PrivateRedis;
let system: RunningSystem;

beforeAll(async () => {
  redis = await PrivateRedis.start({ appendOnly: true });
  system = await startSystem({
    REDIS_URL: redis.url,
    ACTION_BACKOFF: 'fixed',
    ACTION_BACKOFF_DELAY_MS: '200',
    // Jobs whose worker lost Redis mid-fetch are taken over once their lock runs out.
    WORKER_LOCK_MS: '3000',
  });
});
afterAll(async () => {
  await system.stop();
  await redis.destroy();
});

async function post(body: string): Promise<{ status: number; webhookId?: string }> {
  const response = await fetch(`${system.url.ingress}/webhooks/contract-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const json: unknown = await response.json();
  return response.status === 200
    ? { status: 200, webhookId: acknowledgementSchema.parse(json).webhook_id }
    : { status: response.status };
}

/**
 * Posts `bodies` from 10 senders at once; after the 150th answer Redis stops, and comes back
 * 1.5 s later. Which were accepted (index to webhook id), and which refused.
 */
async function postThroughOutage(bodies: string[]) {
  const accepted = new Map<number, string>();
  const refused: number[] = [];
  let next = 0;
  let answered = 0;
  let outage: Promise<void> | undefined;
  const sender = async () => {
    while (next < bodies.length) {
      const index = next++;
      const result = await post(bodies[index]!);
      answered++;
      if (result.webhookId) accepted.set(index, result.webhookId);
      else refused.push(index);
      if (answered === 150) {
        // Redis goes away with requests in flight, and comes back a moment later.
        outage = redis.stop().then(async () => {
          await new Promise((resolve) => setTimeout(resolve, 1500));
          await redis.resume();
        });
      }
    }
  };
  await Promise.all(Array.from({ length: 10 }, sender));
  await outage;
  return { accepted, refused };
}

/** Re-sends each refused body (as a sender would, after Retry-After) until it is accepted. */
async function resendUntilAccepted(
  bodies: string[],
  refused: number[],
  accepted: Map<number, string>,
): Promise<void> {
  for (const index of refused) {
    let result = await post(bodies[index]!);
    for (let tries = 0; result.status === 503 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      result = await post(bodies[index]!);
    }
    expect(result.status).toBe(200);
    accepted.set(index, result.webhookId!);
  }
}

/** Waits until every one of these webhooks has finished, and expects each completed. */
async function expectAllCompleted(webhookIds: Iterable<string>): Promise<void> {
  const client = new Redis(redis.url);
  const subscriber = client.duplicate();
  const outcomes = new OutcomeStore(client, {
    queuePrefix: system.env.QUEUE_PREFIX!,
    recordTtlSeconds: 600,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    // One subscription for all: re-read a webhook whenever its record changes, until none is left.
    const pending = new Set(webhookIds);
    const check = async (webhookId: string) => {
      const outcome = await outcomes.get(webhookId);
      if (outcome && isFinished(outcome)) {
        expect(outcome.state).toBe('completed');
        pending.delete(webhookId);
      }
    };
    const allDone = new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${pending.size} webhooks never finished`)),
        60_000,
      );
      subscriber.on('message', (_channel: string, webhookId: string) => {
        if (!pending.has(webhookId)) return;
        check(webhookId).then(() => {
          if (pending.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        }, reject);
      });
    });
    await subscriber.subscribe(outcomes.channel);
    for (const webhookId of [...pending]) await check(webhookId);
    if (pending.size > 0) await allDone;
  } finally {
    // Also when the first reads found every webhook finished: no rejection is left pending.
    clearTimeout(timer);
    subscriber.disconnect();
    client.disconnect();
  }
}

/** How many calls the partner API saw under each Idempotency-Key. */
async function callsPerIdempotencyKey(): Promise<Map<string, number>> {
  const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as {
    headers: Record<string, string>;
  }[];
  const perKey = new Map<string, number>();
  for (const call of calls)
    perKey.set(
      call.headers['idempotency-key']!,
      (perKey.get(call.headers['idempotency-key']!) ?? 0) + 1,
    );
  return perKey;
}

describe('Redis restarted under load', { timeout: 120_000 }, () => {
  it('loses no acknowledged event; each action runs, at most twice', async () => {
    const bodies = Array.from({ length: EVENTS }, () =>
      JSON.stringify(signEvent(sampleEvent('contract', { status: 'signed' }), DEV_WEBHOOK_SECRET)),
    );
    const { accepted, refused } = await postThroughOutage(bodies);
    expect(refused.length).toBeGreaterThan(0);

    // The refused ones are re-sent until accepted.
    await resendUntilAccepted(bodies, refused, accepted);
    expect(accepted.size).toBe(EVENTS);

    await expectAllCompleted(accepted.values());
    const perKey = await callsPerIdempotencyKey();
    expect(perKey.size).toBe(new Set(accepted.values()).size);
    // At least once: an action whose worker lost Redis between its call and recording it is run
    // again once its lock expires, with the same Idempotency-Key. Never more than that.
    expect(Math.max(...perKey.values())).toBeLessThanOrEqual(2);
  });
});
