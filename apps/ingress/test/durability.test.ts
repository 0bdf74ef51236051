import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema, errorBodySchema } from '@pw/shared/events';
import { PrivateRedis, signedEvent } from '@pw/test-utils';
import { actionJobsOf, jobCount, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const path = '/webhooks/quote-status';
let redis: PrivateRedis;
let harness: Harness;

beforeAll(async () => {
  // With the append-only file on, what Redis held before a stop is still there after it.
  redis = await PrivateRedis.start({ appendOnly: true });
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
    // Answered within the 5 seconds the API allows, never a hang: the ingress gives Redis 3 s.
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

  it('a delivery refused with 503 left nothing behind: re-sent, it is accepted once', async () => {
    const event = signedEvent('quote');
    const before = await jobCount(harness);
    await redis.stop();
    expect((await post(event)).status).toBe(503);
    const ready = new Promise((resolve) => harness.redis.once('ready', resolve));
    await redis.resume();
    await ready;
    expect(await jobCount(harness)).toBe(before);

    const resent = await post(event);
    expect(resent.status).toBe(200);
    const ack = acknowledgementSchema.parse(resent.body);
    expect(await actionJobsOf(harness, ack)).not.toContain(undefined);
    expect(await jobCount(harness)).toBe(before + 1);
    // From now on it is a plain repeat: the same ack, nothing added.
    expect((await post(event)).body).toEqual(ack);
    expect(await jobCount(harness)).toBe(before + 1);
  });

  it('a 503 after Redis hung means "not confirmed": the event may be in, and its retry is answered as a repeat', async () => {
    const event = signedEvent('quote');
    const before = await jobCount(harness);
    redis.freeze();
    const unconfirmed = await post(event);
    expect(unconfirmed.status).toBe(503);
    expect(errorBodySchema.parse(unconfirmed.body).error.code).toBe('unavailable');
    redis.thaw();
    // The ingress's own connection answers in order: once this PING is back, the pipeline the
    // frozen Redis had already received has been applied.
    await harness.redis.ping();
    expect(await jobCount(harness)).toBe(before + 1);

    const retry = await post(event);
    expect(retry.status).toBe(200);
    const ack = acknowledgementSchema.parse(retry.body);
    expect(await actionJobsOf(harness, ack)).not.toContain(undefined);
    expect(await jobCount(harness)).toBe(before + 1);
    expect((await post(event)).body).toEqual(ack);
    // Counted as unconfirmed, not as a refusal.
    const counted = await harness.metrics.received.get();
    const outcomes = counted.values.map((value) => value.labels.outcome);
    expect(outcomes).toContain('unconfirmed');
    expect(outcomes).not.toContain('unavailable');
  });
});
