import { DelayedError, UnrecoverableError } from 'bullmq';
import type { Job } from 'bullmq';
import type { ActionCall, ActionSettings, ActionsConfig } from '@pw/shared/actions';
import { boundedError, isoNow } from '@pw/shared/outcomes';
import type { AttemptTiming, OutcomeStore, SkipReason } from '@pw/shared/outcomes';
import { orderTime } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import { annotateSpan, PermanentError, codeOf, PwError, RetryableError } from '@pw/shared/runtime';
import type { FailureCode, Logger } from '@pw/shared/runtime';
import { ActionLimits, concurrencyWait } from './action-limits.js';
import type { Admission, Wake } from './circuit-breaker.js';
import type { ActionStart } from './action-start.js';
import type { EntityTurns, Turn } from './entity-turns.js';
import { boundApi } from './actions/action.js';
import type { ActionDefinition, Outcome } from './actions/action.js';
import { expandPath } from './actions/expand-path.js';
import { actionDefinition } from './actions/registry.js';
import { circuitResult, holdsAfterFailure, reportsAnswer } from './circuit-gate.js';
import type { CircuitGate } from './circuit-gate.js';
import { circuitTarget } from './config.js';
import type { PartnerTarget } from './config.js';
import { forMarket } from './market-table.js';
import type { MarketTable } from './market-table.js';
import type { WorkerMetrics } from './metrics.js';
import type { PartnerApi } from './partner-api.js';

export interface ActionProcessorDeps {
  actionsConfig: ActionsConfig;
  start: ActionStart;
  limits: ActionLimits;
  /** The partition's entity turns: one call at a time per entity and state-changing action. */
  turns: EntityTurns;
  circuits: CircuitGate;
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
  /** The partner target of this event (its market's, or the default) and its circuit's name. */
  target: PartnerTarget;
  circuit: string;
}

/** The partner-API call of a try, or why the event cannot make one (`invalid_path_value`). */
type Call = ActionCall | { error: unknown };

/**
 * The `actions` processor: skips an action that is disabled or that a newer event made stale,
 * waits while its target's circuit is open, waits for a slot under the action's limits, then
 * calls the partner API and records the outcome.
 */
export async function processAction(
  job: Job<ActionJobData>,
  deps: ActionProcessorDeps,
  token?: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<Outcome | { skipped: SkipReason }> {
  const { webhook_id: webhookId, action } = job.data;
  const attempt = job.attemptsMade + 1;
  annotateSpan({ webhook_id: webhookId, event_type: job.data.event_type, action, attempt });
  const target = forMarket(deps.targets.byMarket, job.data.event) ?? deps.targets.fallback;
  let log: Logger | undefined;
  const run: Try = {
    definition: actionDefinition(action),
    settings: deps.actionsConfig.actions[action],
    attempt,
    // Made on first use: a pino child per action serializes its bindings, and an action that
    // completes logs nothing below LOG_LEVEL=info.
    get log() {
      log ??= deps.log.child({ webhook_id: webhookId, action, job_id: job.id, attempt });
      return log;
    },
    signal,
    target,
    circuit: circuitTarget(target),
  };
  if (run.settings?.enabled === false) return skip(job, run, deps, 'disabled');
  const limited = run.settings && ActionLimits.applies(run.settings) ? run.settings : undefined;
  const call = callOf(run, job.data.event);
  const turn = 'error' in call ? undefined : turnOf(job, run);
  // The out-of-order check, the circuit's admission and, when no slot is to be waited for and
  // the event can fill the path, the call's start in the record (one command on a clean circuit).
  const begun = await deps.start.begin({
    webhookId,
    action,
    eventType: job.data.event_type,
    entityId: job.data.entity_id,
    staleAfter: staleAfterOf(job, run),
    circuit: run.circuit,
    jobId: job.id ?? webhookId,
    order: job.timestamp,
    // A call that may wait for a slot or a turn is counted started once it gets them (a first
    // call, waiting for no slot, at its end).
    start: !limited && !turn && !('error' in call),
    countAtEnd: Boolean(turn) && !limited,
    turn: limited ? undefined : turn, // no slot to wait for: taken with the check, when it can
    // A replayed job starts afresh in BullMQ, but its record counts calls already.
    firstStart: job.attemptsStarted <= 1 && !job.data.replayed,
    stalled: job.stalledCounter > 0,
  });
  if (begun.stale) return skip(job, run, deps, 'stale');
  const { admission } = begun;
  if (admission.kind === 'hold') await hold(job, run, deps, admission, token);
  if (admission.kind === 'wait') await waitAWhile(job, token);
  let called = false;
  let giveTurn: (() => Promise<void>) | undefined;
  try {
    if (limited) await takeSlot(job, limited, deps, token);
    if (turn) giveTurn = await waitForTurn(job, run, deps, { turn, looked: begun.turnWait }, token);
    called = true;
    return await callAction(job, run, deps, { ...begun, call, giveTurn }, token);
  } finally {
    // Given with the completion's writes already when the call completed. Not awaited: it
    // reaches Redis ahead of the job's move, on the same connection, and tells its own failure.
    void giveTurn?.();
    // No call after all (waiting for a slot): the probe or in-flight lease is given back first,
    // so that a failure to free the slot cannot keep the probe.
    if (
      !called &&
      (admission.kind === 'probe' || (admission.kind === 'call' && admission.tracked))
    ) {
      await deps.circuits
        .leave(run.circuit, job, 'neutral')
        .catch((error: unknown) => run.log.warn({ err: error }, 'circuit lease not given back'));
    }
    if (limited?.max_concurrent) await deps.limits.release(action, job.id ?? webhookId);
  }
}

/**
 * Gives the entity's turn back once the call is over (answered, failed or timed out): once, however
 * often it is asked.
 */
function turnGiver(turn: Turn, run: Try, deps: ActionProcessorDeps): () => Promise<void> {
  let given: Promise<void> | undefined;
  return () =>
    (given ??= deps.turns
      .give(turn)
      .catch((error: unknown) => run.log.warn({ err: error }, 'turn not given back')));
}

/**
 * Holds the job while its target's circuit is open: no attempt spent, no call made. The record,
 * the board's job log and the counter hear of it once per hold (a job woken to look again is not
 * held anew), or when the call it just made failed.
 */
async function hold(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
  admission: { delayMs: number; newly: boolean; wake?: Wake },
  token: string | undefined,
  failed?: { error: unknown; timing: AttemptTiming; countCall: boolean; recovering?: boolean },
): Promise<never> {
  const { webhook_id: webhookId, action } = job.data;
  if (admission.wake) deps.circuits.wake(run.circuit, admission.wake);
  if (admission.newly || failed !== undefined) {
    // What is written about the hold must not cost the action an attempt.
    await Promise.all([
      failed
        ? deps.outcomes.held(
            webhookId,
            action,
            describe(failed.error),
            failed.timing,
            failed.countCall,
          )
        : deps.outcomes.held(webhookId, action),
      job.log(
        `held: the circuit of ${run.circuit} is open; no attempt is spent, the job runs once a probe gets an answer`,
      ),
    ]).catch((failure: unknown) => run.log.warn({ err: failure }, 'hold not recorded'));
    deps.metrics.actionsHeld.inc({ action });
  } else {
    // Held on and on (an outage of days): its record must outlast the hold.
    await deps.outcomes.keep(webhookId).catch(() => undefined);
  }
  await job.moveToDelayed(Date.now() + admission.delayMs, token);
  // Closed meanwhile (its held jobs woken before this one was delayed): back at once. Not the
  // first failure after a close, held on a closed circuit until the next call tells.
  if (
    !failed?.recovering &&
    (await deps.circuits.state(run.circuit).catch(() => 'open')) === 'closed'
  ) {
    await job.promote().catch(() => undefined);
  }
  throw new DelayedError();
}

/** The target is suspect and as many calls as may still fail are in flight: back in a moment. */
async function waitAWhile(job: Job<ActionJobData>, token: string | undefined): Promise<never> {
  const waits = Math.max(0, job.attemptsStarted - job.attemptsMade - 1);
  await job.moveToDelayed(Date.now() + concurrencyWait(waits), token);
  throw new DelayedError();
}

/**
 * The entity's turn the job's call needs: a state-changing action (`skip_when_stale`) of an event
 * with an entity id makes one call at a time per entity (docs/architecture.md, Order).
 */
function turnOf(job: Job<ActionJobData>, run: Try): Turn | undefined {
  const { entity_id: entityId, event_type: eventType, action } = job.data;
  if (!checksStale(run) || entityId === undefined || entityId === '') return undefined;
  return {
    eventType,
    entityId,
    action,
    jobId: job.id ?? job.data.webhook_id,
    order: job.timestamp,
  };
}

/**
 * Takes the entity's turn (`looked`: the start took it already, 0, or found it taken) and returns
 * its give; or, while another call of the action for the entity is in flight, moves the job back to
 * wait for it without spending an attempt (`held: entity_busy`): woken when that call ends, or
 * looking again within `TURN_LOOK_AGAIN_MS`.
 */
async function waitForTurn(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
  { turn, looked }: { turn: Turn; looked: number | undefined },
  token: string | undefined,
): Promise<() => Promise<void>> {
  const waitMs = looked ?? (await deps.turns.take(turn));
  if (waitMs === 0) return turnGiver(turn, run, deps);
  const { webhook_id: webhookId, action } = job.data;
  deps.metrics.actionsWaitingTurn.inc({ action });
  await deps.outcomes
    .waitingTurn(webhookId, action)
    .catch((error: unknown) => run.log.warn({ err: error }, 'wait for the turn not recorded'));
  await job.moveToDelayed(Date.now() + waitMs, token);
  throw new DelayedError();
}

/** The event's order time when the action is skipped if a newer event for its entity came first. */
const staleAfterOf = (job: Job<ActionJobData>, run: Try): number | undefined =>
  checksStale(run) && job.data.entity_id !== undefined
    ? (job.data.order_ms ??
      orderTime(job.data.event, Date.parse(job.data.received_at ?? '') || job.timestamp))
    : undefined;

/** True when the action changes state, so it is skipped once a newer event for its entity came. */
const checksStale = (run: Try): boolean =>
  run.settings?.skip_when_stale ?? run.definition.changesState;

/** The call the action makes for `event`; an event that cannot fill the path makes none. */
function callOf(run: Try, event: Record<string, unknown>): Call {
  try {
    return {
      method: run.settings?.method ?? run.definition.call.method,
      path: expandPath(run.settings?.path ?? run.definition.call.path, event),
    };
  } catch (error) {
    return { error };
  }
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
  // A job held before it became stale must not stay first in line for the next probe (on its
  // first start it was never held: nothing shared to write).
  if (job.attemptsStarted > 1) await deps.circuits.forget(run.circuit, job);
  await deps.outcomes.skipped(webhookId, action, reason);
  deps.metrics.actions.inc({ action, outcome: `skipped_${reason}` });
  if (deps.log.isLevelEnabled('info')) run.log.info(SKIP_MESSAGES[reason]);
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

/** What the call starts with: the try's start, and the entity's turn's give when it took one. */
interface CallStart {
  admission: Admission;
  call: Call;
  counted: number;
  countsAtEnd: boolean;
  /** Sent with the completion's writes. */
  giveTurn?: () => Promise<void>;
}

/**
 * The call itself: completed, or failed (to retry, or for good) with the reason recorded; a
 * retryable failure of a target whose circuit is open (this failure may have opened it) holds
 * the job instead, without spending the attempt.
 */
async function callAction(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
  { admission, call, counted, countsAtEnd, giveTurn }: CallStart,
  token: string | undefined,
): Promise<Outcome> {
  const { webhook_id: webhookId, action, event } = job.data;
  const reportAnswers = reportsAnswer(admission);
  const stop = deps.metrics.actionSeconds.startTimer({ action });
  const started = { at: isoNow(), ms: performance.now() };
  const timing = (status: number | null): AttemptTiming => {
    if (status !== null) annotateSpan({ http_status: status });
    return {
      started_at: started.at,
      status,
      duration_ms: Math.round(performance.now() - started.ms),
    };
  };
  // The call is made from here on: counted before it (`started`), unless its end counts it.
  let calling = false;
  try {
    // Before the attempt is counted: an event that cannot fill the path makes no call.
    if ('error' in call) throw call.error;
    // The call's number among the action's calls: its start's count, or, counted at its end,
    // the first (a job's first start, never replayed).
    const attempts = countsAtEnd ? 1 : counted || (await deps.outcomes.started(webhookId, action));
    calling = true;
    const outcome = await run.definition.handler(event, {
      webhookId,
      action,
      get log() {
        return run.log;
      },
      api: boundApi(deps.api, run.target, `${webhookId}:${action}`, run.signal),
      call,
      attempt: run.attempt,
      signal: run.signal,
      config: deps.actionsConfig,
    });
    stop();
    if (reportAnswers) {
      // The call is done: a report that does not reach Redis must not make it run again.
      await deps.circuits
        .leave(run.circuit, job, 'succeeded', performance.now() - started.ms)
        .catch((error: unknown) => run.log.warn({ err: error }, 'circuit not told of the answer'));
    }
    // The call's end, with the turn given back, sent and not awaited: on the worker's one
    // connection it reaches Redis ahead of BullMQ's move of the job to completed, in the same
    // write (docs/redis-cost.md). What Redis refuses is sent again (`completed`); a refusal that
    // lasts is told, and the job completes anyway: the call is made, not to be made again.
    void deps.outcomes
      .completed(webhookId, action, timing(outcome.status), attempts, countsAtEnd)
      .catch((error: unknown) =>
        run.log.error({ err: error }, 'completion not recorded: the job completes without it'),
      );
    void giveTurn?.();
    deps.metrics.actions.inc({ action, outcome: 'completed' });
    // Asked first: the child logger itself (its bindings serialized and redacted) is the cost.
    if (deps.log.isLevelEnabled('info'))
      run.log.info({ status: outcome.status }, 'action completed');
    return outcome;
  } catch (error) {
    stop();
    const result = circuitResult(error);
    const failed = { error, timing: timing(httpStatus(error)), countCall: countsAtEnd && calling };
    // A refusal on a clean circuit of a job with no failures there has nothing to report.
    if (result !== 'refused' || reportAnswers) {
      const after = await deps.circuits.leave(run.circuit, job, result);
      // A poison input's failure on a closed circuit is retried with its backoff, as any other.
      if (holdsAfterFailure(result, after)) {
        await holdAfterFailure(job, run, deps, { ...failed, recovering: after.held }, token);
      }
    }
    throw await recordFailure(job, error, run, deps, failed);
  }
}

/**
 * A retryable failure of a target whose circuit is open (this failure may have opened it), or the
 * first right after a close (`recovering`: held while the next call tells): the job is held again
 * without spending the attempt.
 */
async function holdAfterFailure(
  job: Job<ActionJobData>,
  run: Try,
  deps: ActionProcessorDeps,
  failed: { error: unknown; timing: AttemptTiming; countCall: boolean; recovering: boolean },
  token: string | undefined,
): Promise<never> {
  const again = await deps.circuits.enter(run.circuit, job, true);
  const admission = again.kind === 'hold' ? again : { delayMs: 1, newly: false };
  return hold(job, run, deps, admission, token, failed);
}

/** The partner's HTTP status a failure carries in its code (`http_503`), else null. */
const httpStatus = (error: unknown): number | null => {
  const match = /^http_(\d{3})$/.exec(codeOf(error) ?? '');
  return match ? Number(match[1]) : null;
};

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
  { timing, countCall }: { timing: AttemptTiming; countCall: boolean },
): Promise<Error> {
  const { webhook_id: webhookId, action } = job.data;
  const final = error instanceof PermanentError || run.attempt >= (job.opts.attempts ?? 1);
  const state = final ? 'failed' : 'retrying';
  // Failed for good, it waits for the circuit no more: its failures there are forgotten.
  if (final) await deps.circuits.forget(run.circuit, job).catch(() => undefined);
  await deps.outcomes.failed(webhookId, action, state, describe(error), timing, countCall);
  deps.metrics.actions.inc({ action, outcome: state });
  run.log.warn({ err: error, final }, final ? 'action failed' : 'action will be retried');
  return keptError(error);
}

/** The code a retry keeps for an error raised without one (a bug, a Redis client's error). */
export const UNEXPECTED_ERROR = 'unexpected_error' satisfies FailureCode;

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
      : new RetryableError<string>(codeOf(error) ?? UNEXPECTED_ERROR, reason, {
          retryAfterMs: error instanceof RetryableError ? error.retryAfterMs : undefined,
        });
  kept.stack = boundedError(`${kept.name}: ${reason}`);
  return kept;
}
