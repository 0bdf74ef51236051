// The ingress's intake before its partition count is claimed: a webhook that arrives then waits for
// the claim (which keys the entity map) and lands in its entity's partition.
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { DEFAULT_ACTIONS_CONFIG } from '@pw/shared/actions';
import { sampleEvent } from '@pw/shared/events';
import { PartitionedIntake } from '@pw/shared/intake';
import { PartitionCountGuard, Partitions } from '@pw/shared/queue';
import { deleteKeys, testRedisUrl, uniquePrefix } from '@pw/test-utils';
import { BatchedIntake } from '../src/batched-intake.js';

it('takes a webhook in that arrives before the partition count is claimed, in its entity’s partition', async () => {
  const prefix = uniquePrefix();
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  const partitions = new Partitions(prefix, 8);
  const refused: unknown[] = [];
  const guard = new PartitionCountGuard(redis, partitions, (error) => refused.push(error));
  const intake = new PartitionedIntake(
    redis,
    partitions,
    {
      dedupWindowSeconds: 604_800,
      maxClockSkewSeconds: 300,
      recordTtlSeconds: 3600,
      actionsConfig: DEFAULT_ACTIONS_CONFIG,
      retry: { attempts: 3, backoff: { type: 'fixed', delay_ms: 10 } },
    },
    guard,
  );
  try {
    expect(partitions.mapped).toBe(false);
    const event = sampleEvent('quote', { id: 'before-claim' });
    const { event_type: _type, ...fields } = event;
    const accepted = await new BatchedIntake(intake).accept({
      eventType: 'quote.status_changed',
      entityId: String(event.quote_id),
      event: fields,
      canonical: JSON.stringify(fields),
      actions: ['notify_customer'],
    });
    expect(accepted.duplicate).toBe(false);
    expect(partitions.mapped).toBe(true);
    expect(partitions.ofWebhookId(accepted.ack.webhook_id)).toBe(
      partitions.ofEntity(String(event.quote_id)),
    );
    expect(refused).toEqual([]);
  } finally {
    guard.close();
    await intake.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  }
});
