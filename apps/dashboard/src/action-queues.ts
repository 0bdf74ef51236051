import { Queue } from 'bullmq';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared';
import type { ActionJobData, Partitions, RedisClient } from '@pw/shared';

/**
 * The `actions` queue of every partition (`QUEUE_PARTITIONS`), and the one a webhook's or a job's
 * belongs to: its id names its partition (`Partitions.ofWebhookId`).
 */
export class ActionQueues {
  /** By partition. */
  readonly all: readonly Queue<ActionJobData>[];

  constructor(
    readonly partitions: Partitions,
    connection: RedisClient,
  ) {
    this.all = partitions.prefixes.map(
      (prefix) =>
        // The events stream's cap: every Queue made rewrites it in the queue's meta hash.
        new Queue<ActionJobData>(QUEUE_NAMES.actions, {
          connection,
          prefix,
          streams: QUEUE_STREAMS,
        }),
    );
  }

  /** The queue of partition `index`. */
  partition(index: number): Queue<ActionJobData> {
    const queue = this.all[index];
    if (!queue) throw new RangeError(`no partition ${index} of ${this.partitions.count}`);
    return queue;
  }

  /** The queue of the webhook's partition. */
  ofWebhook(webhookId: string): Queue<ActionJobData> {
    return this.partition(this.partitions.ofWebhookId(webhookId));
  }

  /** The queue of an action job (`<webhook_id>.<action>`). */
  ofJob(jobId: string): Queue<ActionJobData> {
    const dot = jobId.lastIndexOf('.');
    return this.ofWebhook(dot > 0 ? jobId.slice(0, dot) : jobId);
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((queue) => queue.close()));
  }
}
