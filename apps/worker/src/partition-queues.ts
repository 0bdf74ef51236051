import { Queue } from 'bullmq';
import { QUEUE_NAMES, QUEUE_STREAMS } from '@pw/shared';
import type { ActionJobData, Partitions, RedisClient } from '@pw/shared';

/** The webhook id an action job's id starts with (`<webhook_id>.<action>`); else the id itself. */
export function webhookIdOfJob(jobId: string): string {
  const dot = jobId.lastIndexOf('.');
  return dot > 0 ? jobId.slice(0, dot) : jobId;
}

/**
 * The `actions` queue of every partition, made on first use: a circuit wakes the jobs it held,
 * whatever partition they are in (this process may take jobs from a few only).
 */
export class PartitionQueues {
  private readonly queues = new Map<number, Queue<ActionJobData>>();

  constructor(
    private readonly connection: RedisClient,
    readonly partitions: Partitions,
  ) {}

  /** The queue of partition `index`. */
  queue(index: number): Queue<ActionJobData> {
    let queue = this.queues.get(index);
    if (!queue) {
      queue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
        connection: this.connection,
        prefix: this.partitions.prefix(index),
        streams: QUEUE_STREAMS,
      });
      this.queues.set(index, queue);
    }
    return queue;
  }

  /** The queue of the job `jobId`: its webhook's partition's. */
  ofJob(jobId: string): Queue<ActionJobData> {
    return this.queue(this.partitions.ofWebhookId(webhookIdOfJob(jobId)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
