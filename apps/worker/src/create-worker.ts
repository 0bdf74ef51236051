import { DelayedError, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { duplicateRedis, PermanentError, QUEUE_NAMES, valueAt } from '@pw/shared';
import type {
  ActionJobData,
  ActionsConfig,
  Logger,
  OutcomeStore,
  RedisClient,
  WebhookJobData,
} from '@pw/shared';
import { ActionLimits } from './action-limits.js';
import { actionJobs, BACKOFF_TYPE } from './action-jobs.js';
import type { RetryDefaults } from './action-jobs.js';
import { boundApi } from './actions/action.js';
import { ACTIONS } from './actions/registry.js';
import { retryDelay } from './backoff.js';
import { EventOrder } from './event-order.js';
import type { PartnerTarget } from './config.js';
import type { WorkerMetrics } from './metrics.js';
import { CallFailed } from './partner-api.js';
import type { PartnerApi } from './partner-api.js';

export interface WorkerDeps {
  connection: RedisClient;
  queuePrefix: string;
  outcomes: OutcomeStore;
  api: PartnerApi;
  targets: { fallback: PartnerTarget; byMarket: Readonly<Record<string, PartnerTarget>> };
  actionsConfig: ActionsConfig;
  retry: RetryDefaults;
  log: Logger;
  metrics: WorkerMetrics;
  /** Jobs at once per queue. @defaultValue 20 */
  concurrency?: number;
  /** Lock duration; a dead worker's jobs are taken over after about this long. @defaultValue 30000 */
  lockMs?: number;
  /** Times a job may be taken over from a dead or stuck worker before it fails. @defaultValue 3 */
  maxStalledCount?: number;
}

export interface RunningWorker {
  webhooks: Worker<WebhookJobData>;
  actions: Worker<ActionJobData>;
  /** Stops taking jobs and waits for active ones; `force` returns them to the queue at once. */
  close(force?: boolean): Promise<void>;
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The worker: fans each webhook out into action jobs, and runs each action against the API. */
export function createWorker(deps: WorkerDeps): RunningWorker {
  const { connection, queuePrefix: prefix, outcomes, log, metrics } = deps;
  const concurrency = deps.concurrency ?? 20;
  const lockDuration = deps.lockMs ?? 30_000;
  const maxStalledCount = deps.maxStalledCount ?? 3;
  const workerOptions = {
    connection,
    prefix,
    concurrency,
    lockDuration,
    stalledInterval: lockDuration,
    maxStalledCount,
    // Back at work within a second once Redis is reachable again (BullMQ waits 15 s by default).
    runRetryDelay: 1000,
  };
  const actionsQueue = new Queue<ActionJobData>(QUEUE_NAMES.actions, { connection, prefix });
  const order = new EventOrder(connection, prefix, deps.retry.recordTtlSeconds);
  // A slot of a worker that died is free again once its job could have run its course.
  const limits = new ActionLimits(connection, prefix, lockDuration + 2 * deps.api.timeoutMs);

  const webhooks = new Worker<WebhookJobData>(
    QUEUE_NAMES.webhooks,
    async (job) => {
      // Actions disabled in ACTIONS_CONFIG since the ingress chose them are left out here too.
      const jobs = actionJobs(job.data, deps.actionsConfig, deps.retry);
      const stale = await order.takeIn(job.data.event_type, job.data.entity_id, job.data.event);
      await outcomes.open({ ...job.data, actions: jobs.map((entry) => entry.data.action) }, stale);
      await actionsQueue.addBulk(jobs);
      metrics.webhooks.inc({ event_type: job.data.event_type });
      log.info(
        { webhook_id: job.data.webhook_id, job_id: job.id, actions: job.data.actions },
        'actions queued',
      );
    },
    workerOptions,
  );

  const targetFor = (event: Record<string, unknown>): PartnerTarget => {
    const market = valueAt(event, 'metadata.market');
    return (
      (typeof market === 'string' && deps.targets.byMarket[market.toLowerCase()]) ||
      deps.targets.fallback
    );
  };

  const runAction = async (job: Job<ActionJobData>, token?: string, signal?: AbortSignal) => {
    const { webhook_id: webhookId, action, event } = job.data;
    const definition = ACTIONS[action];
    const settings = deps.actionsConfig.actions[action];
    const attempt = job.attemptsMade + 1;
    const actionLog = log.child({ webhook_id: webhookId, action, job_id: job.id, attempt });
    const entityId = job.data.entity_id;
    if (
      (settings?.skip_when_stale ?? definition.changesState) &&
      entityId !== undefined &&
      (await order.isStale(job.data.event_type, entityId, event))
    ) {
      await outcomes.skipped(webhookId, action, 'stale');
      metrics.actions.inc({ action, outcome: 'skipped_stale' });
      actionLog.info('action skipped: a newer event for the same entity came first');
      return { skipped: 'stale' };
    }
    const limited = settings && ActionLimits.applies(settings) ? settings : undefined;
    if (limited) {
      // Every time the job came back from waiting for a slot counts as a start without a call.
      const waits = Math.max(0, job.attemptsStarted - job.attemptsMade - 1);
      const waitMs = await limits.acquire(action, job.id ?? webhookId, limited, waits);
      if (waitMs > 0) {
        metrics.actionsThrottled.inc({ action });
        await job.moveToDelayed(Date.now() + waitMs, token);
        throw new DelayedError();
      }
    }
    try {
      return await callAction(job, attempt, actionLog, signal);
    } finally {
      if (limited?.max_concurrent) await limits.release(action, job.id ?? webhookId);
    }
  };

  const callAction = async (
    job: Job<ActionJobData>,
    attempt: number,
    actionLog: Logger,
    signal?: AbortSignal,
  ) => {
    const { webhook_id: webhookId, action, event } = job.data;
    const definition = ACTIONS[action];
    const settings = deps.actionsConfig.actions[action];
    await outcomes.started(webhookId, action);
    const stop = metrics.actionSeconds.startTimer({ action });
    try {
      const outcome = await definition.handler(event, {
        webhookId,
        action,
        log: actionLog,
        api: boundApi(
          deps.api,
          targetFor(event),
          `${webhookId}:${action}`,
          signal ?? new AbortController().signal,
        ),
        call: {
          method: settings?.method ?? definition.call.method,
          path: settings?.path ?? definition.call.path,
        },
        attempt,
        signal: signal ?? new AbortController().signal,
        config: deps.actionsConfig,
      });
      stop();
      await outcomes.settled(webhookId, action, 'completed');
      metrics.actions.inc({ action, outcome: 'completed' });
      actionLog.info({ status: outcome.status }, 'action completed');
      return outcome;
    } catch (error) {
      stop();
      const permanent = error instanceof PermanentError;
      const final = permanent || attempt >= (job.opts.attempts ?? 1);
      const state = final ? 'failed' : 'retrying';
      await outcomes.settled(webhookId, action, state, describe(error));
      metrics.actions.inc({ action, outcome: state });
      actionLog.warn({ err: error, final }, final ? 'action failed' : 'action will be retried');
      // The job keeps the reason, not our stack: operators read it on the board.
      const recorded = permanent
        ? new UnrecoverableError(describe(error))
        : new Error(describe(error), { cause: error });
      recorded.stack = `${recorded.name}: ${recorded.message}`;
      throw recorded;
    }
  };

  const actions = new Worker<ActionJobData>(QUEUE_NAMES.actions, runAction, {
    ...workerOptions,
    settings: {
      backoffStrategy: (attemptsMade, type, error, job) => {
        if (type !== BACKOFF_TYPE || !job) return 0;
        const data = job.data as ActionJobData;
        return retryDelay(
          attemptsMade,
          data.backoff,
          error?.cause instanceof CallFailed ? error.cause.retryAfterMs : undefined,
        );
      },
    },
  });

  // A job that stalled too often is failed by BullMQ itself, outside any processor: record it.
  const eventsConnection = duplicateRedis(connection);
  const actionEvents = new QueueEvents(QUEUE_NAMES.actions, {
    connection: eventsConnection,
    prefix,
  });
  actionEvents.on('failed', ({ jobId, failedReason }) => {
    if (!/stalled/i.test(failedReason)) return;
    void actionsQueue
      .getJob(jobId)
      .then(async (job) => {
        if (!job) return;
        await outcomes.settled(job.data.webhook_id, job.data.action, 'failed', failedReason);
        metrics.actions.inc({ action: job.data.action, outcome: 'failed' });
        log.error(
          { webhook_id: job.data.webhook_id, action: job.data.action, job_id: jobId },
          failedReason,
        );
      })
      .catch((error: unknown) =>
        log.error({ err: error, job_id: jobId }, 'cannot record a stalled job'),
      );
  });

  for (const worker of [webhooks, actions]) {
    worker.on('error', (error) => log.error({ err: error }, 'worker error'));
  }

  return {
    webhooks,
    actions,
    async close(force = false) {
      await Promise.all([webhooks.close(force), actions.close(force)]);
      await Promise.all([actionsQueue.close(), actionEvents.close()]);
      eventsConnection.disconnect();
    },
  };
}
