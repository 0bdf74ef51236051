// REDIS_WAIT_REPLICAS (docs/operations.md → Failover): a webhook is acknowledged only once a
// replica holds it, so a failover that promotes the replica loses no acknowledged webhook; a
// replica that does not answer in time makes the ack a 503, whose retry is answered as a repeat.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema, errorBodySchema } from '@pw/shared/events';
import { keys } from '@pw/shared/queue';
import { PrivateRedis, signedEvent } from '@pw/test-utils';
import { jobCount, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const path = '/webhooks/quote-status';
let master: PrivateRedis;
let replica: PrivateRedis;
let harness: Harness;

beforeAll(async () => {
  master = await PrivateRedis.start();
  replica = await PrivateRedis.start({
    args: ['--replicaof', '127.0.0.1', String(master.port)],
  });
  await replica.linkedToMaster();
  harness = await startHarness({
    redisUrl: master.url,
    // Long enough for a replica on a loaded two-core CI machine (300 ms was not, once); the one
    // 503 below waits it out once, the replica frozen.
    replicaWait: { count: 1, timeoutMs: 3000 },
  });
});
afterAll(async () => {
  await harness.close();
  await replica.destroy();
  await master.destroy();
});

const post = (body: unknown) =>
  request(harness.app)
    .post(path)
    .set('content-type', 'application/json')
    .send(JSON.stringify(body));

describe('with REDIS_WAIT_REPLICAS=1', () => {
  it('acknowledges a webhook the replica already holds', async () => {
    const response = await post(signedEvent('quote'));
    expect(response.status).toBe(200);
    const ack = acknowledgementSchema.parse(response.body);
    const onReplica = replica.client();
    expect(await onReplica.exists(keys.outcome(harness.prefix, ack.webhook_id))).toBe(1);
    onReplica.disconnect();
  });

  it('answers 503 while no replica confirms, and the retry, once it does, as a repeat', async () => {
    const event = signedEvent('quote');
    replica.freeze();
    try {
      const down = await post(event);
      expect(down.status).toBe(503);
      expect(errorBodySchema.parse(down.body).error.code).toBe('unavailable');
    } finally {
      replica.thaw();
    }
    const retry = await post(event);
    expect(retry.status).toBe(200);
    // The first delivery was taken in: the retry is its repeat, and adds nothing (two webhooks
    // in all, this test's and the first test's).
    acknowledgementSchema.parse(retry.body);
    expect(await jobCount(harness)).toBe(2);
  });
});
