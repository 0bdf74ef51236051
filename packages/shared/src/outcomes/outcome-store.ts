import { ACTION_COUNTS_KEEP_SECONDS, channels, deadLetterSeconds, keys } from '../queue/queues.js';
import type { AcceptedWebhook } from '../queue/queues.js';
import { withCommand } from '../redis.js';
import type { RedisClient } from '../redis.js';
import { COMPLETED_KIND, recordStreamKey } from '../records/record-changes.js';
import type { CompletedEntry } from '../records/record-changes.js';
import { boundedError } from './bounded-error.js';
import { attemptOf, noCall, OUTCOME_CHANGE_COMMAND, outcomeChangeCall } from './outcome-change.js';
import type {
  AttemptTiming,
  ChangeCall,
  ChangeOptions,
  OutcomeChangeCommand,
} from './outcome-change.js';
import { addIntake } from '../intake/intake-commands.js';
import type { CommandPipeline, IntakeKeys } from '../intake/intake-commands.js';
import { outcomeKey } from './outcome-keys.js';
import type { OutcomeStoreSettings } from './outcome-keys.js';
import { waitForOutcome } from './outcome-wait.js';
import { countMinuteNow, isoNow } from './time-stamps.js';
import { fromRecord, isFinished, recordOf } from './webhook-outcome.js';
import type { SkipReason, WebhookOutcome } from './webhook-outcome.js';

/**
 * Per-webhook outcome records in Redis, the one current record of each webhook: one hash per
 * webhook, fields per action, written by the process that makes each change (docs/architecture.md,
 * outcome records). Kept as long as a dead letter until the record store has the webhook finished,
 * then `RECORD_TTL_SECONDS` (the recorder shortens it). Every change is announced on a channel, after
 * the change, so readers can await it.
 */
export class OutcomeStore {
  private readonly redis: RedisClient & OutcomeChangeCommand;

  constructor(
    redis: RedisClient,
    private readonly settings: OutcomeStoreSettings,
  ) {
    this.redis = withCommand<OutcomeChangeCommand>(redis, OUTCOME_CHANGE_COMMAND);
  }

  /** The same records, written and read through `redis`. */
  via(redis: RedisClient): OutcomeStore {
    return new OutcomeStore(redis, this.settings);
  }

  private key(webhookId: string): string {
    return outcomeKey(this.settings.queuePrefix, webhookId);
  }

  /** The channel that carries the id of every webhook whose record changed. */
  get channel(): string {
    return channels.outcomeChanged(this.settings.queuePrefix);
  }

  /** Adds to `transaction` the intake of a webhook (see `addIntake`). */
  intake(transaction: CommandPipeline, job: AcceptedWebhook, intake: IntakeKeys): void {
    addIntake(transaction, this.settings, job, intake);
  }

  /**
   * A call for `action` is starting: counts the attempt. Returns the action's attempts with it
   * (0: the record is gone), which the call's end names (`completed`).
   */
  started(webhookId: string, action: string): Promise<number> {
    const { keys, args } = this.startedCommand(webhookId, action);
    return this.redis.pwOutcomeChange(...keys, ...args);
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
   * call was not counted at its start, and is now (a first try's, see `completed`).
   */
  /**
   * The action waits for its entity's turn: a call of it for the same entity is in flight. No
   * attempt is spent and none is recorded.
   */
  async waitingTurn(webhookId: string, action: string): Promise<void> {
    await this.change(webhookId, action, { state: 'waiting', held: 'entity_busy' });
  }

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
   * The action's call failed: retrying (attempts left) or failed for good; `error` is kept to
   * `MAX_ERROR_LENGTH` characters; `timing`: the call's. `countCall`: the call was not counted at
   * its start, and is now (a first try's, see `completed`).
   */
  async failed(
    webhookId: string,
    action: string,
    state: 'retrying' | 'failed',
    error: string,
    timing: AttemptTiming = noCall(),
    countCall = false,
  ): Promise<void> {
    await this.change(
      webhookId,
      action,
      { state, last_error: boundedError(error) },
      {
        // Held no more: it failed (without a call, it may: a token refused once the circuit
        // let it through), and waits, if at all, for its backoff, not for a circuit.
        remove: ['held'],
        attempt: attemptOf(state, timing, error),
        countAttempt: countCall,
        ...(state === 'failed' ? { count: 'failed' } : {}),
      },
    );
  }

  /**
   * The action's call completed (`timing`: the call's), the `attempt`-th call of the action.
   * `countCall`: the call was not counted at its start (a job's first try through a clean
   * circuit writes nothing before its call: docs/redis-cost.md), and is counted now, as the
   * first. Plain commands, no script, sent in one write and run in this order: the action's
   * fields in the record first, then the minute's count, the record stream's entry of what
   * changed and the announcement, so that whatever reads the record after the announcement, or
   * snapshots it after the entry, has the completion. Commands Redis refuses (READONLY after a
   * failover: none of them ran) are sent again, in the same order, `COMPLETED_TRIES` times in all.
   */
  async completed(
    webhookId: string,
    action: string,
    timing: AttemptTiming,
    attempt: number,
    countCall = false,
  ): Promise<void> {
    const call = attemptOf('completed', timing);
    const entry: CompletedEntry = {
      webhook_id: webhookId,
      action,
      attempt,
      started_at: call.started_at,
      finished_at: call.finished_at,
      status: call.status,
      duration_ms: call.duration_ms,
    };
    const { queuePrefix: prefix, recordTtlSeconds } = this.settings;
    const key = this.key(webhookId);
    const counts = keys.actionCounts(prefix, countMinuteNow());
    const fields = [`${action}:state`, 'completed', `${action}:completed_at`, call.finished_at];
    const redis = this.redis;
    await sendAgainRefused(
      [
        () => redis.hset(key, ...fields),
        // An error or a hold comes only after a call, which the first call is not.
        ...(attempt > 1 ? [() => redis.hdel(key, `${action}:last_error`, `${action}:held`)] : []),
        ...(countCall ? [() => redis.hincrby(key, `${action}:attempts`, 1)] : []),
        // A record in flight has its time (a dead letter's); one gone meanwhile is not kept for
        // ever as these fields.
        () => redis.expire(key, deadLetterSeconds(recordTtlSeconds), 'NX'),
        () => redis.hincrby(counts, 'completed', 1),
        () => redis.expire(counts, ACTION_COUNTS_KEEP_SECONDS, 'NX'),
        () =>
          redis.xadd(recordStreamKey(prefix), '*', 'k', COMPLETED_KIND, 'd', JSON.stringify(entry)),
        () => redis.publish(this.channel, webhookId),
      ],
      COMPLETED_TRIES,
    );
  }

  /** The action made no call (`reason`): finished, with nothing left to do. */
  async skipped(webhookId: string, action: string, reason: SkipReason): Promise<void> {
    await this.change(
      webhookId,
      action,
      { state: 'completed', completed_at: isoNow(), skipped: reason },
      {
        remove: ['last_error', 'held'],
        record: reason === 'stale' ? { stale: '1' } : {},
        attempt: attemptOf('skipped', noCall()),
        count: 'completed',
      },
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

  /** The outcome of a webhook, as its record says; `null` when unknown (or no longer kept). */
  async get(webhookId: string): Promise<WebhookOutcome | null> {
    const record = await this.redis.hgetall(this.key(webhookId));
    return record.webhook_id ? fromRecord(record) : null;
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

/** How often the commands of a call's end are sent before a refusal is given up on. */
const COMPLETED_TRIES = 3;

/**
 * Sends `commands` (each sends one command) in order and awaits them; those Redis refused are
 * sent again at once, in order (a connection that met READONLY holds them while it reconnects),
 * `tries` times in all; then the first refusal is thrown.
 */
async function sendAgainRefused(
  commands: readonly (() => Promise<unknown>)[],
  tries: number,
): Promise<void> {
  let left = commands;
  for (let tried = 1; ; tried++) {
    const results = await Promise.allSettled(left.map((send) => send()));
    const refused = results.flatMap((result) => (result.status === 'rejected' ? [result] : []));
    if (refused.length === 0) return;
    if (tried >= tries) throw refused[0]!.reason;
    left = left.filter((_, i) => results[i]!.status === 'rejected');
  }
}
