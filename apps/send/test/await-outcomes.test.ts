// `npm run send --wait` with QUEUE_PARTITIONS=4: each webhook is awaited in its own partition,
// from its outcome record there and that partition's change channel.
import { expect, test, vi } from 'vitest';
import { isFinished, noCall, OutcomeStore } from '@pw/shared/outcomes';
import { channels, Partitions } from '@pw/shared/queue';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { redisPerTest, startIntake } from '@pw/test-utils';
import { awaitOutcomes } from '../src/await-outcomes.js';

const test_ = redisPerTest();

const webhook = (webhookId: string): AcceptedWebhook => ({
  webhook_id: webhookId,
  event_type: 'quote.status_changed',
  entity_id: `Q-${webhookId}`,
  received_at: new Date().toISOString(),
  actions: ['notify_customer'],
  event: { quote_id: `Q-${webhookId}`, customer_id: 'C-1', status: 'approved' },
});

test('waits for a webhook of partition 2 in its partition, and passes over answers that are no acknowledgement', async () => {
  const { redis, prefix } = test_;
  const partitions = new Partitions(prefix, 4);
  const intake = startIntake(redis, partitions.prefix(2), {
    retry: { attempts: 1, backoff: { type: 'fixed', delay_ms: 1 } },
  });
  const subscriber = redis.duplicate();
  try {
    const { ack } = await intake.add(webhook(partitions.newWebhookId(2)));
    const refused = { error: { code: 'invalid_signature', message: 'no' } };
    const outcomes = awaitOutcomes([refused, ack], {
      redis,
      subscriber,
      partitions,
      condition: isFinished,
      timeoutMs: 10_000,
    });
    // Waiting, subscribed to partition 2's channel, before the action finishes.
    const first = outcomes.next();
    const channel = channels.outcomeChanged(partitions.prefix(2));
    await vi.waitFor(async () =>
      expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 1]),
    );
    const store = new OutcomeStore(redis, {
      queuePrefix: partitions.prefix(2),
      recordTtlSeconds: 60,
    });
    const attempts = await store.started(ack.webhook_id, 'notify_customer');
    await store.completed(ack.webhook_id, 'notify_customer', noCall(), attempts);
    expect((await first).value).toMatchObject({
      webhook_id: ack.webhook_id,
      state: 'completed',
    });
    expect((await outcomes.next()).done).toBe(true);
  } finally {
    subscriber.disconnect();
    await intake.close();
  }
});
