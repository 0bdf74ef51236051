import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgementSchema,
  canonicalJson,
  errorBodySchema,
  keys,
  withoutSignature,
} from '@pw/shared';
import { PrivateRedis, signedEvent } from '@pw/test-utils';
import { createHash } from 'node:crypto';
import { jobCount, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const path = '/webhooks/quote-status';
let redis: PrivateRedis;
let harness: Harness;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  harness = await startHarness({ redisUrl: redis.url });
});
afterAll(async () => {
  await harness.close();
  await redis.destroy();
});

const post = (body: unknown) =>
  request(harness.app)
    .post(path)
    .set('content-type', 'application/json')
    // The contract: answered within 5 seconds, never a hang.
    .timeout(5000)
    .send(JSON.stringify(body));

describe('when Redis goes away', () => {
  it('answers 503 with Retry-After (not a hang, not 200), then 200 once Redis is back', async () => {
    expect((await post(signedEvent('quote'))).status).toBe(200);

    await redis.stop();
    const down = await post(signedEvent('quote'));
    expect(down.status).toBe(503);
    expect(down.headers['retry-after']).toMatch(/^\d+$/);
    expect(errorBodySchema.parse(down.body).error.code).toBe('unavailable');
    expect((await request(harness.app).get('/readyz')).status).toBe(503);

    // Not events.once: it would reject on the connection errors logged while Redis is down.
    const ready = new Promise((resolve) => harness.redis.once('ready', resolve));
    await redis.resume();
    await ready;
    const up = await post(signedEvent('quote'));
    expect(up.status).toBe(200);
    expect((await request(harness.app).get('/readyz')).status).toBe(200);
  });

  it('an event claimed but never enqueued (Redis failed in between) is enqueued by the retry, with its first ack', async () => {
    const event = signedEvent('quote');
    const digest = createHash('sha256')
      .update(canonicalJson(withoutSignature(event)))
      .digest('hex');
    const firstAck = {
      received: true,
      processed_at: '2026-11-21T10:00:00.000Z',
      webhook_id: 'wh_AAAAAAAAAAAAAAAAAAAAAA',
      actions_triggered: ['notify_customer', 'update_sales_opportunity'],
    };
    // What the first attempt left: the claim, without the job.
    await harness.inspect.hset(keys.dedup(harness.prefix, digest), {
      ack: JSON.stringify(firstAck),
      enqueued: '0',
    });
    const before = await jobCount(harness);

    const retried = await post(event);
    expect(retried.status).toBe(200);
    expect(acknowledgementSchema.parse(retried.body)).toEqual(firstAck);
    expect(await harness.queue.getJob(firstAck.webhook_id)).toBeDefined();
    expect(await jobCount(harness)).toBe(before + 1);

    // And from now on it is a plain duplicate.
    expect((await post(event)).body).toEqual(firstAck);
    expect(await jobCount(harness)).toBe(before + 1);
  });
});
