import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ACTIONS_CONFIG } from '../src/actions/actions-config.js';
import { sampleEvent } from '../src/events/samples.js';
import { PartitionedIntake } from '../src/intake/partitioned-intake.js';
import { PartitionCountGuard } from '../src/queue/partition-count.js';
import { Partitions } from '../src/queue/partitions.js';
// Relative: @pw/test-utils depends on this package, so it is not one of its dependencies.
import { deleteKeys, testRedisUrl, uniquePrefix } from '../../test-utils/src/test-redis.js';

describe('the partitioned intake', () => {
  it('takes a webhook in that arrives while its connection is still being made', async () => {
    const prefix = uniquePrefix();
    // As the ingress connects: commands sent before the connection is up fail at once.
    const redis = new Redis(testRedisUrl(), { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const partitions = new Partitions(prefix, 4);
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
      const event = sampleEvent('quote');
      const accepted = await intake.accept({
        // Made for a partition here: the entity's is known once the count is claimed.
        webhook_id: partitions.newWebhookId(2),
        event_type: 'quote.status_changed',
        entity_id: String(event.quote_id),
        received_at: new Date().toISOString(),
        actions: ['notify_customer'],
        event,
      });
      expect(accepted.duplicate).toBe(false);
      expect(refused).toEqual([]);
    } finally {
      await intake.close();
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
  });
});
