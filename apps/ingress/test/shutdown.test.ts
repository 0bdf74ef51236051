// SIGTERM while requests are in flight: those answered are true acks, the rest are refused
// connections (never a hang, never a 5xx), and the process exits 0.
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import { actionJobsOf } from './harness.js';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  signedEvent,
  testRedisUrl,
  TEST_SECRET,
  uniquePrefix,
} from '@pw/test-utils';

const prefix = uniquePrefix();
afterAll(async () => {
  const redis = newTestRedis();
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('ingress shutdown under load', { timeout: 60_000 }, () => {
  it('answers what is in flight, acknowledges only what is enqueued, and exits 0', async () => {
    const port = await freePort();
    const ingress = ChildRun.tsx('apps/ingress/src/main.ts', {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      INGRESS_PORT: String(port),
      WEBHOOK_SECRETS: TEST_SECRET,
    });
    await ingress.printed('ingress listening');
    let answered = 0;
    let stopped: Promise<number | null> | undefined;
    const results = await Promise.all(
      Array.from({ length: 300 }, async () => {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/webhooks/quote-status`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(signedEvent('quote')),
            signal: AbortSignal.timeout(15_000),
          });
          const body: unknown = await response.json();
          if (++answered === 50) stopped = ingress.stop('SIGTERM');
          return { status: response.status, body };
        } catch (error) {
          return { error: (error as Error).cause ?? error };
        }
      }),
    );
    expect(await stopped).toBe(0);
    const acks = results
      .filter((r) => 'status' in r && r.status === 200)
      .map((r) => acknowledgementSchema.parse((r as { body: unknown }).body));
    const other = results.filter((r) => 'status' in r && r.status !== 200);
    const refused = results.filter((r) => 'error' in r);
    expect(acks.length).toBeGreaterThanOrEqual(50);
    expect(other).toEqual([]);
    for (const failure of refused)
      expect(String((failure as { error: unknown }).error)).not.toMatch(/TimeoutError|aborted/i);
    const queue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
      connection: { url: testRedisUrl() },
      prefix,
    });
    try {
      for (const ack of acks) {
        expect(ack.actions_triggered.length).toBeGreaterThan(0);
        expect(await actionJobsOf({ queue }, ack)).not.toContain(undefined);
      }
    } finally {
      await queue.close();
    }
  });
});
