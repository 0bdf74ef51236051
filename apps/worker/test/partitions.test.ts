import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { keys } from '@pw/shared/queue';
import { COMPLETED_KIND, recordStreamKey } from '@pw/shared/records';
import type { AcceptedWebhook } from '@pw/shared/queue';
import { newTestRedis } from '@pw/test-utils';
import { PartnerApi } from '../src/partner-api.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// A worker process over QUEUE_PARTITIONS=4: one BullMQ worker per partition, WORKER_CONCURRENCY
// jobs at once in all, each webhook's record and counts in its own partition.

/** Counts the partner calls in flight at once, as the partner would see them. */
class CountingApi extends PartnerApi {
  inFlight = 0;
  most = 0;

  override async call(...args: Parameters<PartnerApi['call']>) {
    this.most = Math.max(this.most, ++this.inFlight);
    try {
      return await super.call(...args);
    } finally {
      this.inFlight--;
    }
  }
}

const redis = newTestRedis();
let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
afterAll(() => redis.disconnect());

/** `perPartition` webhooks of each partition (entities drawn until each partition has them). */
function webhooksOfEvery(harness: WorkerHarness, perPartition: number): AcceptedWebhook[][] {
  const byPartition: AcceptedWebhook[][] = harness.partitions.all().map(() => []);
  while (byPartition.some((jobs) => jobs.length < perPartition)) {
    const job = webhookJob('quote', 'approved');
    const jobs = byPartition[harness.partitions.ofEntity(job.entity_id)]!;
    if (jobs.length < perPartition) jobs.push(job);
  }
  return byPartition;
}

/** The kind and webhook id of every entry of a partition's record stream. */
async function streamChanges(prefix: string): Promise<[string, string][]> {
  const entries = await redis.xrange(recordStreamKey(prefix), '-', '+');
  return entries.map(([, [, kind = '', , data = '{}']]) => [
    kind,
    (JSON.parse(data) as { webhook_id: string }).webhook_id,
  ]);
}

describe('a worker over four partitions', { timeout: 60_000 }, () => {
  it('drains every partition, each outcome in its partition, never more than WORKER_CONCURRENCY calls at once', async () => {
    let api: CountingApi | undefined;
    h = await startWorkerHarness({
      partitions: 4,
      concurrency: 3,
      api: (tokens) => (api = new CountingApi({ tokens, timeoutMs: 5000 })),
    });
    const harness = h;
    // Every call waits for the test's answer, in waves of three: what runs at once piles up.
    let hold = harness.sandbox.api.hold(/.*/);
    const byPartition = webhooksOfEvery(harness, 3);
    for (const job of byPartition.flat()) await harness.enqueue(job);
    let left = byPartition.flat().reduce((sum, job) => sum + job.actions.length, 0);
    while (left > 0) {
      await hold.held(Math.min(3, left));
      const answered = hold;
      hold = harness.sandbox.api.hold(/.*/);
      left -= answered.holding();
      answered.release();
    }
    hold.release();

    for (const [partition, jobs] of byPartition.entries()) {
      for (const job of jobs) {
        expect(harness.partitions.ofWebhookId(job.webhook_id)).toBe(partition);
        expect((await harness.finished(job.webhook_id)).state).toBe('completed');
        for (const other of harness.partitions.all()) {
          const key = keys.outcome(harness.partitions.prefix(other), job.webhook_id);
          expect(await redis.exists(key)).toBe(other === partition ? 1 : 0);
        }
      }
      // Every change to its webhooks' records (the intake's, each try's end, a completion being
      // its action's change alone) is on the partition's own stream.
      const changed = await streamChanges(harness.partitions.prefix(partition));
      expect(new Set(changed.map(([, id]) => id))).toEqual(new Set(jobs.map((j) => j.webhook_id)));
      expect(changed.filter(([kind]) => kind === COMPLETED_KIND).length).toBeGreaterThan(0);
    }
    expect(api?.most).toBe(3);
    // The partitions' workers did fetch more than ran, fewer than two more each: the shared
    // slots held them back.
    expect(harness.worker.slots?.peak.waiting).toBeGreaterThan(0);
    expect(harness.worker.slots?.peak.waiting).toBeLessThan(2 * 4);
    expect(harness.worker.slots?.peak.running).toBe(3);
  });

  it('one busy partition among idle ones still gets every slot', async () => {
    h = await startWorkerHarness({ partitions: 4, concurrency: 3 });
    const harness = h;
    const hold = harness.sandbox.api.hold(/.*/);
    const jobs = webhooksOfEvery(harness, 2)[0]!;
    for (const job of jobs) await harness.enqueue(job);
    await hold.held(3);
    hold.release();
    for (const job of jobs)
      expect((await harness.finished(job.webhook_id)).state).toBe('completed');
  });

  it('WORKER_PARTITIONS=0-1 takes the jobs of partitions 0 and 1 only', async () => {
    h = await startWorkerHarness({ partitions: 4, workerPartitions: [0, 1] });
    const harness = h;
    const byPartition = webhooksOfEvery(harness, 2);
    for (const job of byPartition.flat()) await harness.enqueue(job);
    for (const job of [...byPartition[0]!, ...byPartition[1]!]) {
      expect((await harness.finished(job.webhook_id)).state).toBe('completed');
    }
    expect(harness.worker.workers).toHaveLength(2);
    for (const job of [...byPartition[2]!, ...byPartition[3]!]) {
      const outcome = await harness.outcomes[harness.partitions.ofWebhookId(job.webhook_id)]!.get(
        job.webhook_id,
      );
      expect(outcome?.actions.every((a) => a.state === 'waiting' && a.attempts === 0)).toBe(true);
    }
  });
});
