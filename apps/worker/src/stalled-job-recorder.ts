import type { Job } from 'bullmq';
import type { OutcomeStore } from '@pw/shared/outcomes';
import type { ActionJobData } from '@pw/shared/queue';
import type { Logger } from '@pw/shared/runtime';
import type { WorkerMetrics } from './metrics.js';

export interface StalledJobDeps {
  outcomes: OutcomeStore;
  metrics: WorkerMetrics;
  log: Logger;
}

/**
 * Listener for the action worker's own `failed` events. A job that stalled more often than
 * allowed (its worker died or hung holding it) is marked by BullMQ's stalled check to fail, and
 * the worker that takes it next fails it without running our processor, so nothing else records
 * it: this does, once, in the process that failed it. Failures the processor ran for (recorded
 * there) are passed over. Never rejects.
 */
export async function recordStalledFailure(
  job: Job<ActionJobData> | undefined,
  error: Error,
  deps: StalledJobDeps,
): Promise<void> {
  if (!job?.deferredFailure) return;
  const { webhook_id: webhookId, action } = job.data;
  try {
    await deps.outcomes.failed(webhookId, action, 'failed', error.message);
    deps.metrics.actions.inc({ action, outcome: 'failed' });
    deps.log.error({ webhook_id: webhookId, action, job_id: job.id }, error.message);
  } catch (failure) {
    deps.log.error({ err: failure, job_id: job.id }, 'cannot record a stalled job');
  }
}
