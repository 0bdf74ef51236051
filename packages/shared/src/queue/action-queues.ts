import { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import { QUEUE_STREAMS } from './action-jobs.js';
import type { Partitions } from './partitions.js';
import { QUEUE_NAMES } from './queues.js';
import type { ActionJobData } from './queues.js';

/**
 * The `actions` queue of one partition (its key prefix), as every process makes it: with the
 * events stream's cap, which each Queue made writes into the queue's meta hash.
 */
export const actionsQueue = (connection: RedisClient, prefix: string): Queue<ActionJobData> =>
  new Queue<ActionJobData>(QUEUE_NAMES.actions, { connection, prefix, streams: QUEUE_STREAMS });

/** The webhook id an action job's id starts with (`<webhook_id>.<action>`); else the id itself. */
export function webhookIdOfJob(jobId: string): string {
  const dot = jobId.lastIndexOf('.');
  return dot > 0 ? jobId.slice(0, dot) : jobId;
}

/**
 * The `actions` queue of every partition (`QUEUE_PARTITIONS`), and the one a webhook or a job
 * belongs to: its id names its partition (`Partitions.ofWebhookId`).
 */
export class ActionQueues {
  /** By partition. */
  readonly all: readonly Queue<ActionJobData>[];

  constructor(
    connection: RedisClient,
    readonly partitions: Partitions,
  ) {
    this.all = partitions.prefixes.map((prefix) => actionsQueue(connection, prefix));
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
    return this.ofWebhook(webhookIdOfJob(jobId));
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((queue) => queue.close().catch(() => undefined)));
  }
}
