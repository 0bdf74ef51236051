// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- cluster-key-slot ships no types (see partitions.ts)
/// <reference path="../types/cluster-key-slot.d.ts" />
import type { Queue } from 'bullmq';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { OutcomeStore } from '../outcomes/outcome-store.js';
import type { PartitionCountGuard } from '../queue/partition-count.js';
import type { Partitions } from '../queue/partitions.js';
import { ActionQueues } from '../queue/action-queues.js';
import type { ActionJobData, AcceptedWebhook } from '../queue/queues.js';
import type { RedisClient } from '../redis.js';
import { intakeUnavailable, WebhookIntake } from './webhook-intake.js';
import type {
  IntakeResult,
  IntakeEntry,
  IntakeSettings,
  PreparedWebhook,
} from './webhook-intake.js';

/** `REDIS_WAIT_REPLICAS` and `REDIS_WAIT_TIMEOUT_MS`. */
export interface ReplicaWait {
  count: number;
  timeoutMs: number;
}

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
    private readonly connection: RedisClient,
    private readonly partitions: Partitions,
    settings: Omit<IntakeSettings, 'queuePrefix'>,
    /** Takes nothing in before the partition count is claimed (`PartitionCountGuard`). */
    private readonly guard?: PartitionCountGuard,
    /**
     * Replicas that must hold a webhook before it is acknowledged (`REDIS_WAIT_REPLICAS`), and
     * how long to wait for them. @defaultValue none
     */
    private readonly replicas: ReplicaWait = { count: 0, timeoutMs: 0 },
  ) {
    this.queues = new ActionQueues(connection, partitions).all;
    this.intakes = partitions.prefixes.map((queuePrefix, index) => {
      const outcomes = new OutcomeStore(connection, {
        queuePrefix,
        recordTtlSeconds: settings.recordTtlSeconds,
      });
      return new WebhookIntake(this.queues[index]!, outcomes, { ...settings, queuePrefix });
    });
  }

  /**
   * True once `newWebhookId` can place a webhook: the partition count claimed, and with it the key
   * of the entity map (always, with one partition). Until then, `ready()`.
   */
  get mapped(): boolean {
    return this.partitions.mapped;
  }

  /**
   * Resolves once the partition count is claimed (at once with no guard); rejects as the intake
   * does while Redis cannot be asked (`intake_unavailable`).
   */
  async ready(): Promise<void> {
    if (!this.guard) return;
    try {
      // Once the connection is up, as BullMQ's own commands wait for it.
      await this.queues[0]!.backend.client;
      await this.guard.ready();
    } catch (error) {
      throw intakeUnavailable(error);
    }
  }

  /**
   * A new webhook's id, in the partition of `entityKey`: its entity id, or, for an event that has
   * none, its canonical JSON (what its deduplication is keyed on). Only once `mapped`.
   */
  newWebhookId(entityKey: string): string {
    return this.partitions.newWebhookId(this.partitions.ofEntity(entityKey));
  }

  /** `WebhookIntake.prepare`, by the partition the webhook's id names. */
  prepare(webhook: AcceptedWebhook, canonical?: string): PreparedWebhook {
    return this.intakeOf(webhook).prepare(webhook, canonical);
  }

  /** Takes one webhook in, by the partition its id names: its ack, or the first delivery's. */
  accept(webhook: AcceptedWebhook, canonical?: string): Promise<IntakeResult> {
    const prepared = this.prepare(webhook, canonical);
    return new Promise((resolve, reject) => {
      void this.takeIn([{ ...prepared, resolve, reject }]);
    });
  }

  /**
   * `WebhookIntake.endQuarantine`, by the partition the webhook's id names (where it was kept), once
   * the partition count is claimed.
   */
  async endQuarantine(
    webhook: AcceptedWebhook,
    mode: 'release' | 'discard',
    storedNewestMs?: number,
  ): Promise<boolean> {
    await this.ready();
    const intake = this.intakes[this.partitions.ofWebhookId(webhook.webhook_id)]!;
    return intake.endQuarantine(webhook, mode, storedNewestMs);
  }

  /**
   * `WebhookIntake.takeIn`: one transaction per partition the batch touches; nothing before the
   * partition count is claimed (the batch is refused as unavailable while it cannot be). Never
   * rejects.
   */
  async takeIn(batch: readonly IntakeEntry[]): Promise<void> {
    try {
      await this.ready();
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    if (this.intakes.length === 1) return this.takeInto(0, [...batch]);
    const byPartition = new Map<number, IntakeEntry[]>();
    for (const entry of batch) {
      const index = this.partitions.ofWebhookId(entry.webhook.webhook_id);
      const entries = byPartition.get(index) ?? [];
      entries.push(entry);
      byPartition.set(index, entries);
    }
    await Promise.all([...byPartition].map(([index, entries]) => this.takeInto(index, entries)));
  }

  /**
   * Takes `entries` in by partition `index`'s intake, then, with `REDIS_WAIT_REPLICAS`, answers
   * them only once that many replicas of the partition's master hold the writes (Redis `WAIT`);
   * else as unavailable: the webhook may be in, and its retry is answered as a repeat.
   */
  private async takeInto(index: number, entries: IntakeEntry[]): Promise<void> {
    const intake = this.intakes[index]!;
    if (this.replicas.count === 0) return intake.takeIn(entries);
    const answered: { entry: IntakeEntry; accepted: IntakeResult }[] = [];
    await intake.takeIn(
      entries.map((entry) => ({
        ...entry,
        resolve: (accepted: IntakeResult) => answered.push({ entry, accepted }),
      })),
    );
    if (answered.length === 0) return;
    let held: number;
    try {
      held = await this.masterOf(index).wait(this.replicas.count, this.replicas.timeoutMs);
    } catch (error) {
      for (const { entry } of answered) entry.reject(intakeUnavailable(error));
      return;
    }
    for (const { entry, accepted } of answered) {
      if (held >= this.replicas.count) entry.resolve(accepted);
      else
        entry.reject(
          intakeUnavailable(
            new Error(`${held} of ${this.replicas.count} replicas held the webhook in time`),
          ),
        );
    }
  }

  /**
   * The connection to the master of partition `index`'s slot: `WAIT` counts the replicas that
   * hold every write made so far on the connection it is sent on.
   */
  private masterOf(index: number): { wait(count: number, timeoutMs: number): Promise<number> } {
    if (!(this.connection instanceof Cluster)) return this.connection;
    const slot = calculateSlot(`${this.partitions.prefix(index)}:`);
    const address = this.connection.slots[slot]?.[0];
    const master = this.connection
      .nodes('master')
      .find((node) => `${node.options.host}:${node.options.port}` === address);
    if (!master) throw new Error(`no master known for slot ${slot}`);
    return master;
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close().catch(() => undefined)));
  }

  private intakeOf(webhook: AcceptedWebhook): WebhookIntake {
    return this.intakes[this.partitions.ofWebhookId(webhook.webhook_id)]!;
  }
}
