import { DelayedError, UnrecoverableError } from 'bullmq';
import type { Job } from 'bullmq';
import { boundedError, PermanentError, PwError, RetryableError } from '@pw/shared';
import type {
  ActionJobData,
  ActionSettings,
  ActionsConfig,
  Logger,
  OutcomeStore,
  SkipReason,
} from '@pw/shared';
import { ActionLimits } from './action-limits.js';
import { boundApi } from './actions/action.js';
import type { ActionDefinition, Outcome } from './actions/action.js';
import { expandPath } from './actions/expand-path.js';
import { actionDefinition } from './actions/registry.js';
import type { PartnerTarget } from './config.js';
import type { EventOrder } from './event-order.js';
import { forMarket } from './market-table.js';
import type { MarketTable } from './market-table.js';
import type { WorkerMetrics } from './metrics.js';
import type { PartnerApi } from './partner-api.js';

export interface ActionProcessorDeps {
  actionsConfig: ActionsConfig;
  order: EventOrder;
  limits: ActionLimits;
  outcomes: OutcomeStore;
  api: PartnerApi;
  targets: { fallback: PartnerTarget; byMarket: MarketTable<PartnerTarget> };
  metrics: WorkerMetrics;
  log: Logger;
}

/** One try of one action, as the processor sees it. */
interface Try {
  definition: ActionDefinition;
  settings: ActionSettings | undefined;
  /** 1 for the first try. */
  attempt: number;
  log: Logger;
  signal: AbortSignal;
}

/**
 * The `actions` processor: skips an action a newer event made stale, waits for a slot under the
 * action's limits, then calls the partner API and records the outcome.
 */
export async function processAction(
  job: Job<ActionJobData>,
  deps: ActionProcessorDeps,
  token?: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<Outcome | { skipped: SkipReason }> {
  const { webhook_id: webhookId, action } = job.data;
  const attempt = job.attemptsMade + 1;
  const run: Try = {
    definition: actionDefinition(action),
    settings: deps.actionsConfig.actions[action],
    attempt,
    log: deps.log.child({ webhook_id: webhookId, action, job_id: job.id, attempt }),
    signal,
  };
  if (run.settings?.enabled === false) return skip(job, run, deps, 'disabled');
  if (await isStale(job, run, deps)) return skip(job, run, deps, 'stale');
  const limited = run.settings && ActionLimits.applies(run.settings) ? run.settings : undefined;
  if (limited) await takeSlot(job, limited, deps, token);
  try {
    return await callAction(job, run, deps);
  } finally {
    if (limited?.max_concurrent) await deps.limits.release(action, job.id ?? webhookId);
  }
}

/** True when the action changes state and a newer event for its entity came first. */
async function isStale(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
): Promise<boolean> {
  const { event_type: eventType, entity_id: entityId } = job.data;
  if (!(run.settings?.skip_when_stale ?? run.definition.changesState)) return false;
  if (entityId === undefined) return false;
  return deps.order.isStale(eventType, entityId, job.data.event);
}

const SKIP_MESSAGES: Record<SkipReason, string> = {
  stale: 'action skipped: a newer event for the same entity came first',
  disabled: 'action skipped: ACTIONS_CONFIG disables it',
};

/** Completes the action without a call, and says why. */
async function skip(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
  reason: SkipReason,
): Promise<{ skipped: SkipReason }> {
  const { webhook_id: webhookId, action } = job.data;
  await deps.outcomes.skipped(webhookId, action, reason);
  deps.metrics.actions.inc({ action, outcome: `skipped_${reason}` });
  run.log.info(SKIP_MESSAGES[reason]);
  return { skipped: reason };
}

/** Takes a slot under the action's limits, or moves the job back to wait for one. */
async function takeSlot(
  job: Job<ActionJobData>,
  settings: ActionSettings,
  deps: ActionProcessorDeps,
  token: string | undefined,
): Promise<void> {
  const { webhook_id: webhookId, action } = job.data;
  // Every time the job came back from waiting for a slot counts as a start without a call.
  const waits = Math.max(0, job.attemptsStarted - job.attemptsMade - 1);
  const waitMs = await deps.limits.acquire(action, job.id ?? webhookId, settings, waits);
  if (waitMs <= 0) return;
  deps.metrics.actionsThrottled.inc({ action });
  await job.moveToDelayed(Date.now() + waitMs, token);
  throw new DelayedError();
}

/** The call itself: completed, or failed (to retry, or for good) with the reason recorded. */
async function callAction(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
): Promise<Outcome> {
  const { webhook_id: webhookId, action, event } = job.data;
  const stop = deps.metrics.actionSeconds.startTimer({ action });
  try {
    // Before the attempt is counted: an event that cannot fill the path makes no call.
    const call = {
      method: run.settings?.method ?? run.definition.call.method,
      path: expandPath(run.settings?.path ?? run.definition.call.path, event),
    };
    await deps.outcomes.started(webhookId, action);
    const target = forMarket(deps.targets.byMarket, event) ?? deps.targets.fallback;
    const outcome = await run.definition.handler(event, {
      webhookId,
      action,
      log: run.log,
      api: boundApi(deps.api, target, `${webhookId}:${action}`, run.signal),
      call,
      attempt: run.attempt,
      signal: run.signal,
      config: deps.actionsConfig,
    });
    stop();
    await deps.outcomes.settled(webhookId, action, 'completed');
    deps.metrics.actions.inc({ action, outcome: 'completed' });
    run.log.info({ status: outcome.status }, 'action completed');
    return outcome;
  } catch (error) {
    stop();
    throw await recordFailure(job, error, run, deps);
  }
}

/** What an operator reads about a failure: its code first when it has one. */
const describe = (error: unknown) =>
  error instanceof PwError
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);

/** Records a failed try; returns the error BullMQ keeps (see `keptError`). */
async function recordFailure(
  job: Job<ActionJobData>,
  error: unknown,
  run: Try,
  deps: ActionProcessorDeps,
): Promise<Error> {
  const { webhook_id: webhookId, action } = job.data;
  const final = error instanceof PermanentError || run.attempt >= (job.opts.attempts ?? 1);
  const state = final ? 'failed' : 'retrying';
  await deps.outcomes.settled(webhookId, action, state, describe(error));
  deps.metrics.actions.inc({ action, outcome: state });
  run.log.warn({ err: error, final }, final ? 'action failed' : 'action will be retried');
  return keptError(error);
}

/** The code a retry keeps for an error raised without one (a bug, a Redis client's error). */
export const UNEXPECTED_ERROR = 'unexpected_error';

/**
 * What BullMQ keeps of a failed try, for operators to read on the board: the reason, bounded, and
 * not our stack. A `PermanentError` fails the job at once; a `RetryableError`, or an error of
 * unknown kind, is retried, as a `RetryableError` that carries the partner's `Retry-After` to
 * `actionBackoff`.
 */
function keptError(error: unknown): Error {
  const reason = boundedError(describe(error));
  const kept =
    error instanceof PermanentError
      ? new UnrecoverableError(reason)
      : new RetryableError(error instanceof PwError ? error.code : UNEXPECTED_ERROR, reason, {
          retryAfterMs: error instanceof RetryableError ? error.retryAfterMs : undefined,
        });
  kept.stack = boundedError(`${kept.name}: ${reason}`);
  return kept;
}
