import { Queue } from 'bullmq';
import { OutcomeStore } from '../outcomes/outcome-store.js';
import type { PartitionCountGuard } from '../queue/partition-count.js';
import type { Partitions } from '../queue/partitions.js';
import { QUEUE_NAMES } from '../queue/queues.js';
import type { ActionJobData, WebhookJobData } from '../queue/queues.js';
import type { RedisClient } from '../redis.js';
import { intakeUnavailable, WebhookIntake } from './webhook-intake.js';
import type {
  AcceptedWebhook,
  IntakeEntry,
  IntakeSettings,
  PreparedWebhook,
} from './webhook-intake.js';

/**
 * The intake over every queue partition (docs/operations.md → Partitions): a new webhook's id
 * names the partition of its entity (`newWebhookId`), and each webhook is taken in by the
 * partition its id names, in one transaction with the others of that partition in the batch. With
 * one partition it is the `WebhookIntake` of the queue prefix, as before partitions.
 */
export class PartitionedIntake {
  private readonly intakes: readonly WebhookIntake[];
  readonly queues: readonly Queue<ActionJobData>[];

  constructor(
    connection: RedisClient,
    private readonly partitions: Partitions,
    settings: Omit<IntakeSettings, 'queuePrefix'>,
    /** Takes nothing in before the partition count is claimed (`PartitionCountGuard`). */
    private readonly guard?: PartitionCountGuard,
  ) {
    this.queues = partitions.prefixes.map(
      (prefix) => new Queue<ActionJobData>(QUEUE_NAMES.actions, { connection, prefix }),
    );
    this.intakes = partitions.prefixes.map((queuePrefix, index) => {
      const outcomes = new OutcomeStore(connection, {
        queuePrefix,
        recordTtlSeconds: settings.recordTtlSeconds,
      });
      return new WebhookIntake(this.queues[index]!, outcomes, { ...settings, queuePrefix });
    });
  }

  /**
   * A new webhook's id, in the partition of `entityKey`: its entity id, or, for an event that has
   * none, its canonical JSON (what its deduplication is keyed on).
   */
  newWebhookId(entityKey: string): string {
    return this.partitions.newWebhookId(this.partitions.ofEntity(entityKey));
  }

  /** `WebhookIntake.prepare`, by the partition the webhook's id names. */
  prepare(webhook: WebhookJobData, canonical?: string): PreparedWebhook {
    return this.intakeOf(webhook).prepare(webhook, canonical);
  }

  /** `WebhookIntake.accept`, by the partition the webhook's id names. */
  accept(webhook: WebhookJobData, canonical?: string): Promise<AcceptedWebhook> {
    return this.intakeOf(webhook).accept(webhook, canonical);
  }

  /**
   * `WebhookIntake.takeIn`: one transaction per partition the batch touches; nothing before the
   * partition count is claimed (the batch is refused as unavailable while it cannot be). Never
   * rejects.
   */
  async takeIn(batch: readonly IntakeEntry[]): Promise<void> {
    if (this.guard) {
      try {
        await this.guard.ready();
      } catch (error) {
        for (const entry of batch) entry.reject(intakeUnavailable(error));
        return;
      }
    }
    if (this.intakes.length === 1) return this.intakes[0]!.takeIn(batch);
    const byPartition = new Map<number, IntakeEntry[]>();
    for (const entry of batch) {
      const index = this.partitions.ofWebhookId(entry.webhook.webhook_id);
      const entries = byPartition.get(index) ?? [];
      entries.push(entry);
      byPartition.set(index, entries);
    }
    await Promise.all(
      [...byPartition].map(([index, entries]) => this.intakes[index]!.takeIn(entries)),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close().catch(() => undefined)));
  }

  private intakeOf(webhook: WebhookJobData): WebhookIntake {
    return this.intakes[this.partitions.ofWebhookId(webhook.webhook_id)]!;
  }
}
