import { PwError } from '../errors.js';
import type { WebhookJobData } from '../queue/queues.js';
import { withCommand } from '../redis.js';
import type { LuaCommand, RedisClient } from '../redis.js';

export const ACTION_STATES = ['waiting', 'active', 'retrying', 'completed', 'failed'] as const;
export type ActionState = (typeof ACTION_STATES)[number];
export type WebhookState = 'queued' | 'processing' | 'completed' | 'failed';
export const SKIP_REASONS = ['stale', 'disabled'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** `waitUntil` ran out of time before the outcome was as awaited. */
export const OUTCOME_WAIT_TIMED_OUT = 'outcome_wait_timed_out';

/** The most characters an error text keeps: an action's `last_error`, a job's failure reason. */
export const MAX_ERROR_LENGTH = 500;

/** The error text cut to `MAX_ERROR_LENGTH` characters, ending in `…` when it was cut. */
export function boundedError(text: string): string {
  if (text.length <= MAX_ERROR_LENGTH) return text;
  // Never end on half a surrogate pair.
  const kept = text.slice(0, MAX_ERROR_LENGTH - 1).replace(/[\uD800-\uDBFF]$/, '');
  return `${kept}…`;
}

export interface ActionOutcome {
  name: string;
  state: ActionState;
  /** Every call made for the action, replays included. */
  attempts: number;
  /** Why the last try failed, at most `MAX_ERROR_LENGTH` characters; null once completed. */
  last_error: string | null;
  completed_at: string | null;
  /**
   * Why the action completed without a call: `stale` (a newer event for the entity came first) or
   * `disabled` (`ACTIONS_CONFIG` disabled it after the ingress chose it).
   */
  skipped: SkipReason | null;
  /** `circuit_open` while the action waits for its target's circuit to close (no attempt spent). */
  held: 'circuit_open' | null;
}

/** What happened to one webhook: the dashboard's `GET /api/webhooks/:id` and `send --wait`. */
export interface WebhookOutcome {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  received_at: string;
  state: WebhookState;
  /** A newer event for the same entity was taken in before this one, or while it ran. */
  stale: boolean;
  actions: ActionOutcome[];
}

export interface OutcomeStoreSettings {
  queuePrefix: string;
  /** Seconds a record is kept after its last change (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
}

/** The webhook state follows from its actions' states. */
export function webhookState(actions: readonly ActionOutcome[]): WebhookState {
  if (actions.some((action) => action.state === 'failed')) return 'failed';
  if (actions.every((action) => action.state === 'completed')) return 'completed';
  if (actions.some((action) => action.state !== 'waiting')) return 'processing';
  return 'queued';
}

/** True once every action has completed or failed for good. */
export const isFinished = (outcome: WebhookOutcome): boolean =>
  outcome.actions.every((action) => action.state === 'completed' || action.state === 'failed');

/**
 * One change to an outcome record, in one command: KEYS[1] the record; ARGV: seconds to keep it,
 * the change channel, the webhook id, the attempts field to count one more on ('' for none), a
 * fields to remove, separated by spaces ('' for none), then field and value pairs.
 */
const OUTCOME_CHANGE: LuaCommand = {
  name: 'pwOutcomeChange',
  numberOfKeys: 1,
  lua: `
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
if ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[4], 1) end
for field in string.gmatch(ARGV[5], '%S+') do redis.call('HDEL', KEYS[1], field) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
`,
};

/**
 * The record of a webhook the ingress is adding, written in the same pipeline right after the add:
 * KEYS[1] the webhook's job, KEYS[2] its record; ARGV: seconds to keep it, the change channel, the
 * webhook id, then field and value pairs. Nothing is written when the job does not exist by then
 * (the delivery was a repeat, whose job has the first id, or the add failed).
 */
export const OPEN_ACCEPTED_COMMAND: LuaCommand = {
  name: 'pwOutcomeAccepted',
  numberOfKeys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`,
};

/** A pipeline that runs named Lua commands (BullMQ's client abstraction has one). */
export interface CommandPipeline {
  runCommand(name: string, args: (string | number)[]): unknown;
}

interface ChangeCommand {
  pwOutcomeChange(key: string, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * Per-webhook outcome records in Redis: one hash per webhook, fields per action, kept
 * `RECORD_TTL_SECONDS`. Every change is announced on a channel so readers can await it.
 */
export class OutcomeStore {
  private readonly redis: RedisClient & ChangeCommand;

  constructor(
    redis: RedisClient,
    private readonly settings: OutcomeStoreSettings,
  ) {
    this.redis = withCommand<ChangeCommand>(redis, OUTCOME_CHANGE);
  }

  private key(webhookId: string): string {
    return `${this.settings.queuePrefix}:outcome:${webhookId}`;
  }

  /** The channel that carries the id of every webhook whose record changed. */
  get channel(): string {
    return `${this.settings.queuePrefix}:outcome-changes`;
  }

  /**
   * Adds to `pipeline`, after the add of the webhook's job (whose key is `jobKey`), the writing of
   * its record, `queued` with every action waiting, so the record exists from the acknowledgement
   * on; nothing is written for a repeat or a failed add. The pipeline's client must have
   * `OPEN_ACCEPTED_COMMAND` defined.
   */
  openAccepted(pipeline: CommandPipeline, job: WebhookJobData, jobKey: string): void {
    pipeline.runCommand(OPEN_ACCEPTED_COMMAND.name, [
      jobKey,
      this.key(job.webhook_id),
      this.settings.recordTtlSeconds,
      this.channel,
      job.webhook_id,
      ...Object.entries(recordFields(job)).flat(),
      ...job.actions.flatMap((action) => [`${action}:state`, 'waiting']),
    ]);
  }

  /**
   * Makes sure the record exists when the worker takes the webhook in (the ingress wrote it; a
   * job accepted before it did so has none yet); actions keep their state, new ones start
   * `waiting`. `stale`: a newer event for the same entity was taken in before it.
   */
  async open(job: WebhookJobData, stale = false): Promise<void> {
    const fields = recordFields(job);
    if (stale) fields.stale = '1';
    const key = this.key(job.webhook_id);
    const multi = this.redis.multi().hset(key, fields);
    for (const action of job.actions) multi.hsetnx(key, `${action}:state`, 'waiting');
    await multi
      .expire(key, this.settings.recordTtlSeconds)
      .publish(this.channel, job.webhook_id)
      .exec();
  }

  /** A call for `action` is starting: counts the attempt. */
  async started(webhookId: string, action: string): Promise<void> {
    await this.change(
      webhookId,
      action,
      { state: 'active' },
      { countAttempt: true, remove: ['held'] },
    );
  }

  /**
   * The action waits, without spending an attempt, for its target's circuit to close; `error`:
   * why the call it just made failed, if it made one.
   */
  async held(webhookId: string, action: string, error?: string): Promise<void> {
    const fields: Record<string, string> = { state: 'waiting', held: 'circuit_open' };
    if (error !== undefined) fields.last_error = boundedError(error);
    await this.change(webhookId, action, fields);
  }

  /**
   * The action ended: completed (which clears `last_error`), retrying (attempts left) or failed
   * for good; `error` is kept to `MAX_ERROR_LENGTH` characters.
   */
  async settled(
    webhookId: string,
    action: string,
    state: 'completed' | 'retrying' | 'failed',
    error?: string,
  ): Promise<void> {
    if (state === 'completed') {
      await this.completed(webhookId, action, {});
      return;
    }
    const fields: Record<string, string> = { state };
    if (error !== undefined) fields.last_error = boundedError(error);
    await this.change(webhookId, action, fields);
  }

  /** The action made no call (`reason`): finished, with nothing left to do. */
  async skipped(webhookId: string, action: string, reason: SkipReason): Promise<void> {
    await this.completed(
      webhookId,
      action,
      { skipped: reason },
      reason === 'stale' ? { stale: '1' } : {},
    );
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
    record: Record<string, string> = {},
  ) {
    await this.change(
      webhookId,
      action,
      { state: 'completed', completed_at: new Date().toISOString(), ...fields },
      { remove: ['last_error', 'held'], record },
    );
  }

  /**
   * In one command: sets the action's fields (and the webhook's `record` fields), removes
   * the `remove` fields, counts an attempt when `countAttempt`, and announces it.
   */
  private async change(
    webhookId: string,
    action: string,
    fields: Record<string, string>,
    options: { countAttempt?: boolean; remove?: string[]; record?: Record<string, string> } = {},
  ) {
    const pairs = [
      ...Object.entries(fields).flatMap(([name, value]) => [`${action}:${name}`, value]),
      ...Object.entries(options.record ?? {}).flat(),
    ];
    await this.redis.pwOutcomeChange(
      this.key(webhookId),
      this.settings.recordTtlSeconds,
      this.channel,
      webhookId,
      options.countAttempt ? `${action}:attempts` : '',
      (options.remove ?? []).map((field) => `${action}:${field}`).join(' '),
      ...pairs,
    );
  }

  /** The outcome of a webhook; `null` when unknown (or no longer kept). */
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

  /**
   * Resolves with the outcome as soon as `condition` holds for it, re-reading on each change;
   * rejects with a `PwError` (`OUTCOME_WAIT_TIMED_OUT`) after `timeoutMs`.
   */
  async waitUntil(
    webhookId: string,
    subscriber: RedisClient,
    condition: (outcome: WebhookOutcome) => boolean,
    options: { timeoutMs: number },
  ): Promise<WebhookOutcome> {
    let wake: () => void = () => undefined;
    const onMessage = (_channel: string, id: string) => id === webhookId && wake();
    subscriber.on('message', onMessage);
    await subscriber.subscribe(this.channel);
    const deadline = Date.now() + options.timeoutMs;
    try {
      for (;;) {
        const changed = new Promise<void>((resolve) => (wake = resolve));
        const outcome = await this.get(webhookId);
        if (outcome && condition(outcome)) return outcome;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new PwError(
            OUTCOME_WAIT_TIMED_OUT,
            `webhook ${webhookId} not as awaited after ${options.timeoutMs} ms: ${JSON.stringify(outcome)}`,
          );
        }
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          changed,
          new Promise((resolve) => (timer = setTimeout(resolve, left))),
        ]);
        clearTimeout(timer);
      }
    } finally {
      subscriber.off('message', onMessage);
      await subscriber.unsubscribe(this.channel);
    }
  }
}

/** The webhook's own fields of its record. */
const recordFields = (job: WebhookJobData): Record<string, string> => ({
  webhook_id: job.webhook_id,
  event_type: job.event_type,
  entity_id: job.entity_id,
  received_at: job.received_at,
  actions: JSON.stringify(job.actions),
});

function fromRecord(record: Record<string, string>): WebhookOutcome {
  const names = JSON.parse(record.actions ?? '[]') as string[];
  const actions = names.map((name): ActionOutcome => ({
    name,
    state: (record[`${name}:state`] as ActionState | undefined) ?? 'waiting',
    attempts: Number(record[`${name}:attempts`] ?? 0),
    last_error: record[`${name}:last_error`] ?? null,
    completed_at: record[`${name}:completed_at`] ?? null,
    skipped: SKIP_REASONS.find((reason) => reason === record[`${name}:skipped`]) ?? null,
    held: record[`${name}:held`] === 'circuit_open' ? 'circuit_open' : null,
  }));
  return {
    webhook_id: record.webhook_id ?? '',
    event_type: record.event_type ?? '',
    entity_id: record.entity_id ?? '',
    received_at: record.received_at ?? '',
    state: webhookState(actions),
    stale: record.stale === '1',
    actions,
  };
}
