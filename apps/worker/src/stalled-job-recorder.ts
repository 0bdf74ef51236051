import type { Queue } from 'bullmq';
import type { ActionJobData, Logger, OutcomeStore } from '@pw/shared';
import type { WorkerMetrics } from './metrics.js';

export interface StalledJobDeps {
  actionsQueue: Queue<ActionJobData>;
  outcomes: OutcomeStore;
  metrics: WorkerMetrics;
  log: Logger;
}

/**
 * Listener for the `actions` queue's `failed` events: a job that stalled too often is failed by
 * BullMQ itself, outside any processor, so its outcome is recorded here. Never rejects.
 */
export async function recordStalledFailure(
  { jobId, failedReason }: { jobId: string; failedReason: string },
  deps: StalledJobDeps,
): Promise<void> {
  if (!/stalled/i.test(failedReason)) return;
  try {
    const job = await deps.actionsQueue.getJob(jobId);
    if (!job) return;
    const { webhook_id: webhookId, action } = job.data;
    await deps.outcomes.settled(webhookId, action, 'failed', failedReason);
    deps.metrics.actions.inc({ action, outcome: 'failed' });
    deps.log.error({ webhook_id: webhookId, action, job_id: jobId }, failedReason);
  } catch (error) {
    deps.log.error({ err: error, job_id: jobId }, 'cannot record a stalled job');
  }
}
