import { channels, deadLetterSeconds } from '../queue/queues.js';
import type { WebhookJobData } from '../queue/queues.js';
import { withCommand } from '../redis.js';
import type { RedisClient } from '../redis.js';
import { COMPLETION_KIND, recordStreamKey } from '../records/record-changes.js';
import type { AttemptRecord, CompletionEntry } from '../records/record-changes.js';
import { boundedError } from './bounded-error.js';
import { attemptOf, noCall, OUTCOME_CHANGE_COMMAND, outcomeChangeCall } from './outcome-change.js';
import type {
  AttemptTiming,
  ChangeCall,
  ChangeOptions,
  OutcomeChangeCommand,
} from './outcome-change.js';
import { addIntake } from './outcome-intake.js';
import type { CommandPipeline, IntakeKeys } from './outcome-intake.js';
import { actionJobKey, completedFirst, outcomeKey } from './outcome-keys.js';
import type { OutcomeStoreSettings } from './outcome-keys.js';
import { waitForOutcome } from './outcome-wait.js';
import { isoNow } from './time-stamps.js';
import { fromRecord, isFinished, recordOf, webhookState } from './webhook-outcome.js';
import type { SkipReason, WebhookOutcome } from './webhook-outcome.js';

/**
 * Per-webhook outcome records in Redis: one hash per webhook, fields per action, kept
 * `RECORD_TTL_SECONDS`. Every change is announced on a channel so readers can await it.
 */
export class OutcomeStore {
  private readonly redis: RedisClient & OutcomeChangeCommand;

  constructor(
    redis: RedisClient,
    private readonly settings: OutcomeStoreSettings,
  ) {
    this.redis = withCommand<OutcomeChangeCommand>(redis, OUTCOME_CHANGE_COMMAND);
  }

  private key(webhookId: string): string {
    return outcomeKey(this.settings.queuePrefix, webhookId);
  }

  /** The channel that carries the id of every webhook whose record changed. */
  get channel(): string {
    return channels.outcomeChanged(this.settings.queuePrefix);
  }

  /** Adds to `transaction` the intake of a webhook (see `addIntake`). */
  intake(transaction: CommandPipeline, job: WebhookJobData, intake: IntakeKeys): void {
    addIntake(transaction, this.settings, job, intake);
  }

  /** A call for `action` is starting: counts the attempt. */
  async started(webhookId: string, action: string): Promise<void> {
    const { keys, args } = this.startedCommand(webhookId, action);
    await this.redis.pwOutcomeChange(...keys, ...args);
  }

  /**
   * The 3 keys and the arguments of `outcomeChange` for `started`, for a script that starts the
   * call in the same command as other checks.
   */
  startedCommand(webhookId: string, action: string): ChangeCall {
    // Not sent to the record store: the attempt is, with its outcome, once it ends (the store's
    // copy of a webhook in flight may say `waiting` for an action Redis already says is active).
    return outcomeChangeCall(
      this.settings,
      webhookId,
      action,
      { state: 'active' },
      { countAttempt: true, remove: ['held'], unrecorded: true },
    );
  }

  /**
   * The action waits, without spending an attempt, for its target's circuit to close; `error`:
   * why the call it just made failed, if it made one (`timing`: that call's). `countCall`: that
   * call was not counted at its start, and is now (see `settled`).
   */
  async held(
    webhookId: string,
    action: string,
    error?: string,
    timing: AttemptTiming = noCall(),
    countCall = false,
  ): Promise<void> {
    const fields: Record<string, string> = { state: 'waiting', held: 'circuit_open' };
    if (error !== undefined) fields.last_error = boundedError(error);
    await this.change(webhookId, action, fields, {
      attempt: attemptOf('held', timing, error),
      count: 'held',
      countAttempt: countCall,
    });
  }

  /**
   * The action ended: completed (which clears `last_error`), retrying (attempts left) or failed
   * for good; `error` is kept to `MAX_ERROR_LENGTH` characters; `timing`: the call's.
   * `countCall`: the try's call was not counted at its start (`started`) and is counted now, in
   * the same change: a first try through a clean circuit writes its record once. Returns the
   * time the try ended, the action's `completed_at` when it completed.
   */
  async settled(
    webhookId: string,
    action: string,
    state: 'completed' | 'retrying' | 'failed',
    error?: string,
    timing: AttemptTiming = noCall(),
    countCall = false,
  ): Promise<string> {
    const attempt = attemptOf(state, timing, state === 'completed' ? undefined : error);
    if (state === 'completed' && countCall) {
      await this.completedFirstCall(webhookId, action, attempt);
      return attempt.finished_at;
    }
    if (state === 'completed') {
      await this.completed(webhookId, action, {}, {}, attempt, countCall);
      return attempt.finished_at;
    }
    const fields: Record<string, string> = { state };
    if (error !== undefined) fields.last_error = boundedError(error);
    await this.change(webhookId, action, fields, {
      attempt,
      countAttempt: countCall,
      ...(state === 'failed' ? { count: 'failed' as const } : {}),
    });
    return attempt.finished_at;
  }

  /**
   * The action completed on its first call, which was not counted at its start: nothing was
   * written for it since the intake. The common path costs Redis one stream entry (and an
   * announcement), no script: the recorder copies the entry to the record store and then to this
   * record (`completionHotWrites`), and `get` reads the completion off the finished job meanwhile
   * (docs/redis-cost.md).
   */
  private async completedFirstCall(
    webhookId: string,
    action: string,
    attempt: Omit<AttemptRecord, 'attempt'>,
  ): Promise<void> {
    const entry: CompletionEntry = {
      webhook_id: webhookId,
      action,
      started_at: attempt.started_at,
      finished_at: attempt.finished_at,
      status: attempt.status,
      duration_ms: attempt.duration_ms,
    };
    // Sent together: one write, one read by Redis; on a cluster both go to the partition's master.
    await Promise.all([
      this.redis.xadd(
        recordStreamKey(this.settings.queuePrefix),
        '*',
        'k',
        COMPLETION_KIND,
        'd',
        JSON.stringify(entry),
      ),
      this.redis.publish(this.channel, webhookId),
    ]);
  }

  /** The action made no call (`reason`): finished, with nothing left to do. */
  async skipped(webhookId: string, action: string, reason: SkipReason): Promise<void> {
    await this.completed(
      webhookId,
      action,
      { skipped: reason },
      reason === 'stale' ? { stale: '1' } : {},
      attemptOf('skipped', noCall()),
    );
  }

  /**
   * Puts back a record Redis no longer holds (kept past its time) from the record store's copy,
   * so that a replay has a record to change; nothing is sent to the store, which has it.
   */
  async restore(outcome: WebhookOutcome): Promise<void> {
    const key = this.key(outcome.webhook_id);
    await this.redis
      .multi()
      .hset(key, recordOf(outcome))
      .expire(key, deadLetterSeconds(this.settings.recordTtlSeconds))
      .exec();
  }

  /** Keeps a record in flight (an action held by an open circuit) as long as a dead letter. */
  async keep(webhookId: string): Promise<void> {
    await this.redis.expire(this.key(webhookId), deadLetterSeconds(this.settings.recordTtlSeconds));
  }

  /** An operator replays a failed action: back to waiting. */
  async requeued(webhookId: string, action: string): Promise<void> {
    await this.change(webhookId, action, { state: 'waiting' });
  }

  /**
   * Completed, now: an error from an earlier try no longer describes the action. `record`: fields
   * of the webhook itself, set in the same command.
   */
  private async completed(
    webhookId: string,
    action: string,
    fields: Record<string, string>,
    record: Record<string, string>,
    attempt: Omit<AttemptRecord, 'attempt'>,
    countCall = false,
  ) {
    await this.change(
      webhookId,
      action,
      { state: 'completed', completed_at: isoNow(), ...fields },
      {
        remove: ['last_error', 'held'],
        record,
        attempt,
        count: 'completed',
        countAttempt: countCall,
      },
    );
  }

  /** One change in one command (`outcomeChangeCall` says what it does). */
  private async change(
    webhookId: string,
    action: string,
    fields: Record<string, string>,
    options: ChangeOptions = {},
  ) {
    const call = outcomeChangeCall(this.settings, webhookId, action, fields, options);
    await this.redis.pwOutcomeChange(...call.keys, ...call.args);
  }

  /**
   * The outcome of a webhook; `null` when unknown (or no longer kept). An action the record still
   * has as waiting whose job completed finished on its first call (`completedFirstCall`) and the
   * recorder has not copied it yet: it is read as completed, at the job's finishing time.
   */
  async get(webhookId: string): Promise<WebhookOutcome | null> {
    const record = await this.redis.hgetall(this.key(webhookId));
    if (!record.webhook_id) return null;
    const outcome = fromRecord(record);
    const open = outcome.actions.filter((action) => action.state === 'waiting');
    if (open.length === 0 || outcome.state === 'quarantined') return outcome;
    const jobs = await Promise.all(
      open.map((action) =>
        this.redis.hmget(
          actionJobKey(this.settings.queuePrefix, webhookId, action.name),
          'finishedOn',
          'returnvalue',
        ),
      ),
    );
    let read = false;
    open.forEach((action, i) => {
      const [finishedOn, returnvalue] = jobs[i] ?? [];
      if (!finishedOn || returnvalue === null || returnvalue === undefined) return;
      Object.assign(action, completedFirst(action, completedAt(returnvalue, finishedOn)));
      read = true;
    });
    if (read && outcome.state !== 'discarded') outcome.state = webhookState(outcome.actions);
    return outcome;
  }

  /**
   * Resolves with the outcome once every action has finished (completed or failed for good),
   * listening on the change channel; `subscriber` must be a connection of its own.
   */
  waitUntilFinished(
    webhookId: string,
    subscriber: RedisClient,
    options: { timeoutMs: number },
  ): Promise<WebhookOutcome> {
    return this.waitUntil(webhookId, subscriber, isFinished, options);
  }

  /** Resolves with the outcome as soon as `condition` holds for it (see `waitForOutcome`). */
  waitUntil(
    webhookId: string,
    subscriber: RedisClient,
    condition: (outcome: WebhookOutcome) => boolean,
    options: { timeoutMs: number },
  ): Promise<WebhookOutcome> {
    return waitForOutcome(this, webhookId, subscriber, condition, options);
  }
}

/**
 * When a finished job's action completed: the time the worker gave its record (the job's return
 * value's `completed_at`, which the recorder writes too), else when BullMQ finished the job.
 */
function completedAt(returnvalue: string, finishedOn: string): string {
  try {
    const value = JSON.parse(returnvalue) as { completed_at?: unknown } | null;
    if (typeof value?.completed_at === 'string') return value.completed_at;
  } catch {
    // Not JSON: BullMQ's time, then.
  }
  return new Date(Number(finishedOn)).toISOString();
}
