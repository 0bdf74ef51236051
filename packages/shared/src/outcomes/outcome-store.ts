import { PwError } from '../errors.js';
import {
  ACTION_COUNTS_KEEP_SECONDS,
  channels,
  DEAD_LETTER_MIN_SECONDS,
  deadLetterSeconds,
  keys,
} from '../queue/queues.js';
import type { ActionCount, WebhookJobData } from '../queue/queues.js';
import { recordStreamKey } from '../records/record-changes.js';
import { ackBucket, encodeAck } from './kept-acks.js';
import type {
  AcceptedWebhookRecord,
  AttemptOutcome,
  AttemptRecord,
} from '../records/record-changes.js';
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

/** How a call ended, as the action processor saw it: the rest of an `AttemptRecord`. */
export interface AttemptTiming {
  started_at: string;
  /** The partner's HTTP status; null without an answer. */
  status: number | null;
  duration_ms: number;
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
 * How long the record KEYS[1] is kept after a change (ARGV[1] is `RECORD_TTL_SECONDS`): while any
 * action is still to run, as long as a dead letter (a webhook waiting out a long outage must not
 * lose its record); once every action completed, `RECORD_TTL_SECONDS` (the record store has it);
 * once finished with a failed action, as long as a dead letter, never less. Then appends the whole
 * record after the change to the record stream KEYS[2] (an `outcome` change, with the attempt it
 * ended, if any, in the local \`attempt\`; \`-\`: a change not worth recording) and announces it on
 * channel ARGV[2].
 */
const SNAPSHOT_LUA = `
local ttl = tonumber(ARGV[1])
local long = math.max(ttl, ${DEAD_LETTER_MIN_SECONDS})
local flat = redis.call('HGETALL', KEYS[1])
local record = {}
for i = 1, #flat, 2 do record[flat[i]] = flat[i + 1] end
local finished, failed = true, false
for _, name in ipairs(cjson.decode(record['actions'] or '[]')) do
  local state = record[name .. ':state']
  if state == 'failed' then failed = true elseif state ~= 'completed' then finished = false end
end
if finished and not failed then redis.call('EXPIRE', KEYS[1], ttl)
elseif redis.call('TTL', KEYS[1]) < long then redis.call('EXPIRE', KEYS[1], long) end
if attempt ~= '-' then
  redis.call('XADD', KEYS[2], '*', 'k', 'outcome', 'd', cjson.encode(record), 'a', attempt)
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
`;

/**
 * One change to an outcome record, as a Lua function `outcomeChange(KEYS, ARGV)` that other
 * scripts call with their own slices (the worker's start of an action, `pwActionStart`), and as a
 * command of its own. KEYS[1] the record, KEYS[2] the record stream,
 * KEYS[3] this minute's action counts; ARGV: seconds to keep it, the change channel, the webhook
 * id, the attempts field to count one more on ('' for none), fields to remove, separated by spaces
 * ('' for none), the attempt the change ended as JSON ('' for none), the count to add one to in
 * KEYS[3] ('' for none), then field and value pairs.
 */
export const OUTCOME_CHANGE_FUNCTION = `
local function outcomeChange(KEYS, ARGV)
-- A record that is gone (kept past its time) is not rebuilt from one action's fields: the
-- change is refused (0) rather than leave a record without its webhook.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local attempt = ARGV[6]
redis.call('HSET', KEYS[1], unpack(ARGV, 8))
if ARGV[7] ~= '' then
  redis.call('HINCRBY', KEYS[3], ARGV[7], 1)
  redis.call('EXPIRE', KEYS[3], ${ACTION_COUNTS_KEEP_SECONDS})
end
if ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[4], 1) end
for field in string.gmatch(ARGV[5], '%S+') do redis.call('HDEL', KEYS[1], field) end
if attempt == '-' then
  -- A change not recorded (a call's start): its webhook is in flight, so the snapshot's reading of
  -- the whole record would only keep it as long as a dead letter, which this does.
  local long = math.max(tonumber(ARGV[1]), ${DEAD_LETTER_MIN_SECONDS})
  if redis.call('TTL', KEYS[1]) < long then redis.call('EXPIRE', KEYS[1], long) end
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
${SNAPSHOT_LUA}
return 1
end
`;

const OUTCOME_CHANGE: LuaCommand = {
  name: 'pwOutcomeChange',
  numberOfKeys: 3,
  lua: `${OUTCOME_CHANGE_FUNCTION}
return outcomeChange(KEYS, ARGV)`,
};

/** Milliseconds a repeat's blocks on its own action jobs are kept: the transaction needs them. */
const REPEAT_BLOCK_MS = 10_000;

/**
 * The intake of a webhook, first in the transaction that adds its action jobs: deduplication,
 * event order and record in one script. KEYS[1] the deduplication key of the event's digest,
 * KEYS[2] the webhook's record, KEYS[3] the record stream, KEYS[4] the day's kept acks (for
 * repeats), KEYS[5] this minute's ingress counts, KEYS[6] the set of minutes whose counts changed,
 * KEYS[7] the newest event time of the entity, KEYS[8...] the deduplication keys of this
 * delivery's action jobs. ARGV: milliseconds to keep the deduplication key, seconds to keep the
 * record, the change channel, the webhook id, the accepted webhook as JSON (a \`webhook\`
 * change), its kept ack, seconds to keep the day's acks, the minute, the event's time in ms ('':
 * none), milliseconds to keep the entity's newest time, then the record's field and value pairs.
 *
 * A repeat (the key holds the first delivery's id) writes nothing but the keys KEYS[8...], which
 * make BullMQ refuse, as duplicates, the action jobs added after this script in the same
 * transaction: so a repeat adds no job, and a new webhook its jobs and its record, or neither.
 * Returns the first delivery's webhook id, or this one's.
 */
export const INTAKE_COMMAND: LuaCommand = {
  name: 'pwIntake',
  lua: `
local first = redis.call('GET', KEYS[1])
if first then
  for i = 8, #KEYS do redis.call('SET', KEYS[i], first, 'PX', ${REPEAT_BLOCK_MS}) end
  return first
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[1])
redis.call('HSET', KEYS[2], unpack(ARGV, 11))
if ARGV[9] ~= '' then
  local time = tonumber(ARGV[9])
  local newest = tonumber(redis.call('GET', KEYS[7]) or '-1')
  if time > newest then
    redis.call('SET', KEYS[7], ARGV[9], 'PX', ARGV[10])
  else
    redis.call('PEXPIRE', KEYS[7], ARGV[10])
    if newest > time then redis.call('HSET', KEYS[2], 'stale', '1') end
  end
end
redis.call('EXPIRE', KEYS[2], math.max(tonumber(ARGV[2]), ${DEAD_LETTER_MIN_SECONDS}))
redis.call('XADD', KEYS[3], '*', 'k', 'webhook', 'd', ARGV[5])
redis.call('HSET', KEYS[4], ARGV[4], ARGV[6])
redis.call('EXPIRE', KEYS[4], ARGV[7])
redis.call('HINCRBY', KEYS[5], 'accepted', 1)
redis.call('EXPIRE', KEYS[5], 172800)
redis.call('SADD', KEYS[6], ARGV[8])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return ARGV[4]
`,
};

/** What the intake of one webhook needs besides the webhook. */
export interface IntakeKeys {
  /** The deduplication key of the event's canonical digest, and how long it is kept (ms). */
  dedupKey: string;
  dedupMs: number;
  /** The event's time (ms; undefined: none), and how long its entity's newest time is kept (ms). */
  eventTimeMs: number | undefined;
  latestKeepMs: number;
  /** The BullMQ deduplication keys of the webhook's action jobs (see `INTAKE_COMMAND`). */
  actionDedupKeys: string[];
  /** Seconds the day's kept acks are kept. */
  ackSeconds: number;
  /** The request's trace, kept in the record store; null without tracing. */
  traceId: string | null;
}

/** A pipeline that runs named Lua commands (BullMQ's client abstraction has one). */
export interface CommandPipeline {
  runCommand(name: string, args: (string | number)[]): unknown;
}

/** What `change` does besides setting the action's fields. */
interface ChangeOptions {
  countAttempt?: boolean;
  remove?: string[];
  record?: Record<string, string>;
  attempt?: Omit<AttemptRecord, 'attempt'>;
  unrecorded?: boolean;
  count?: ActionCount;
}

interface ChangeCommand {
  pwOutcomeChange(...args: (string | number)[]): Promise<unknown>;
}

/** The minute (ISO, seconds zero) whose ingress counts a moment falls in. */
export const countMinute = (at: Date): string => `${at.toISOString().slice(0, 16)}:00.000Z`;

let nowMs = Number.NaN;
let nowIso = '';
/**
 * `new Date().toISOString()`, formatted at most once per millisecond: the worker stamps every
 * action's start, end and counts, and formatting a date costs more than the rest of a stamp.
 */
export function isoNow(ms = Date.now()): string {
  if (ms !== nowMs) {
    nowMs = ms;
    nowIso = new Date(ms).toISOString();
  }
  return nowIso;
}

let minuteMs = Number.NaN;
let minuteIso = '';
/** `countMinute(new Date())`, formatted once per minute. */
function countMinuteNow(): string {
  const ms = Date.now();
  const start = ms - (ms % 60_000);
  if (start !== minuteMs) {
    minuteMs = start;
    minuteIso = new Date(start).toISOString();
  }
  return minuteIso;
}

/** The accepted webhook as the record store takes it. */
export const acceptedRecord = (job: WebhookJobData): AcceptedWebhookRecord => ({
  webhook_id: job.webhook_id,
  event_type: job.event_type,
  entity_id: job.entity_id,
  customer_id: typeof job.event.customer_id === 'string' ? job.event.customer_id : null,
  received_at: job.received_at,
  actions: job.actions,
  event: job.event,
});

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

  private get stream(): string {
    return recordStreamKey(this.settings.queuePrefix);
  }

  private key(webhookId: string): string {
    return `${this.settings.queuePrefix}:outcome:${webhookId}`;
  }

  /** The channel that carries the id of every webhook whose record changed. */
  get channel(): string {
    return channels.outcomeChanged(this.settings.queuePrefix);
  }

  /**
   * Adds to `transaction` the intake of a webhook (`INTAKE_COMMAND`, which its client must have
   * defined): unless it repeats an event still remembered, its record, \`queued\` with every
   * action waiting, exists from the acknowledgement on. Its reply is the first delivery's id.
   */
  intake(transaction: CommandPipeline, job: WebhookJobData, intake: IntakeKeys): void {
    const prefix = this.settings.queuePrefix;
    const minute = countMinute(new Date(job.received_at));
    const keyList = [
      intake.dedupKey,
      this.key(job.webhook_id),
      this.stream,
      keys.acks(prefix, ackBucket(job.received_at)),
      keys.ingressCounts(prefix, minute),
      keys.ingressCountsChanged(prefix),
      keys.latest(prefix, job.event_type, job.entity_id),
      ...intake.actionDedupKeys,
    ];
    transaction.runCommand(INTAKE_COMMAND.name, [
      keyList.length,
      ...keyList,
      intake.dedupMs,
      this.settings.recordTtlSeconds,
      this.channel,
      job.webhook_id,
      JSON.stringify({ ...acceptedRecord(job), trace_id: intake.traceId }),
      encodeAck(job.received_at, job.actions),
      intake.ackSeconds,
      minute,
      intake.eventTimeMs ?? '',
      intake.latestKeepMs,
      ...Object.entries(recordFields(job)).flat(),
      ...job.actions.flatMap((action) => [`${action}:state`, 'waiting']),
    ]);
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
  startedCommand(webhookId: string, action: string) {
    // Not sent to the record store: the attempt is, with its outcome, once it ends (the store's
    // copy of a webhook in flight may say `waiting` for an action Redis already says is active).
    return this.changeCommand(
      webhookId,
      action,
      { state: 'active' },
      { countAttempt: true, remove: ['held'], unrecorded: true },
    );
  }

  /**
   * The action waits, without spending an attempt, for its target's circuit to close; `error`:
   * why the call it just made failed, if it made one (`timing`: that call's).
   */
  async held(
    webhookId: string,
    action: string,
    error?: string,
    timing: AttemptTiming = noCall(),
  ): Promise<void> {
    const fields: Record<string, string> = { state: 'waiting', held: 'circuit_open' };
    if (error !== undefined) fields.last_error = boundedError(error);
    await this.change(webhookId, action, fields, {
      attempt: attemptOf('held', timing, error),
      count: 'held',
    });
  }

  /**
   * The action ended: completed (which clears `last_error`), retrying (attempts left) or failed
   * for good; `error` is kept to `MAX_ERROR_LENGTH` characters; `timing`: the call's.
   */
  async settled(
    webhookId: string,
    action: string,
    state: 'completed' | 'retrying' | 'failed',
    error?: string,
    timing: AttemptTiming = noCall(),
  ): Promise<void> {
    const attempt = attemptOf(state, timing, state === 'completed' ? undefined : error);
    if (state === 'completed') {
      await this.completed(webhookId, action, {}, {}, attempt);
      return;
    }
    const fields: Record<string, string> = { state };
    if (error !== undefined) fields.last_error = boundedError(error);
    await this.change(webhookId, action, fields, {
      attempt,
      ...(state === 'failed' ? { count: 'failed' as const } : {}),
    });
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
    const fields: Record<string, string> = {
      webhook_id: outcome.webhook_id,
      event_type: outcome.event_type,
      entity_id: outcome.entity_id,
      received_at: outcome.received_at,
      actions: JSON.stringify(outcome.actions.map((action) => action.name)),
    };
    if (outcome.stale) fields.stale = '1';
    for (const action of outcome.actions) {
      fields[`${action.name}:state`] = action.state;
      fields[`${action.name}:attempts`] = String(action.attempts);
      if (action.last_error !== null) fields[`${action.name}:last_error`] = action.last_error;
      if (action.completed_at !== null) fields[`${action.name}:completed_at`] = action.completed_at;
      if (action.skipped !== null) fields[`${action.name}:skipped`] = action.skipped;
    }
    const key = this.key(outcome.webhook_id);
    await this.redis
      .multi()
      .hset(key, fields)
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
  ) {
    await this.change(
      webhookId,
      action,
      { state: 'completed', completed_at: isoNow(), ...fields },
      { remove: ['last_error', 'held'], record, attempt, count: 'completed' },
    );
  }

  /**
   * In one command: sets the action's fields (and the webhook's `record` fields), removes
   * the `remove` fields, counts an attempt when `countAttempt`, adds one to this minute's
   * `count` (the console's trends), appends the record after the change (and the `attempt` it
   * ended) to the record stream, and announces it.
   */
  private async change(
    webhookId: string,
    action: string,
    fields: Record<string, string>,
    options: ChangeOptions = {},
  ) {
    const command = this.changeCommand(webhookId, action, fields, options);
    await this.redis.pwOutcomeChange(...command.keys, ...command.args);
  }

  /** The keys and arguments of `outcomeChange` for `change`'s arguments. */
  private changeCommand(
    webhookId: string,
    action: string,
    fields: Record<string, string>,
    options: ChangeOptions = {},
  ): { keys: string[]; args: (string | number)[] } {
    // Built with loops: it runs twice per action (the call's start and its end).
    let removed = '';
    for (const field of options.remove ?? []) removed += `${removed ? ' ' : ''}${action}:${field}`;
    const args: (string | number)[] = [
      this.settings.recordTtlSeconds,
      this.channel,
      webhookId,
      options.countAttempt ? `${action}:attempts` : '',
      removed,
      options.unrecorded
        ? '-'
        : options.attempt
          ? JSON.stringify({ action, ...options.attempt })
          : '',
      options.count ?? '',
    ];
    for (const name in fields) args.push(`${action}:${name}`, fields[name]!);
    if (options.record) for (const name in options.record) args.push(name, options.record[name]!);
    return {
      keys: [
        this.key(webhookId),
        this.stream,
        keys.actionCounts(this.settings.queuePrefix, countMinuteNow()),
      ],
      args,
    };
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

/** The outcome a record's hash (or its snapshot in the record stream) describes. */
export function fromRecord(record: Record<string, string>): WebhookOutcome {
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

/** Timing of an attempt that made no call (a skip, a hold while the circuit is open). */
const noCall = (): AttemptTiming => ({
  started_at: isoNow(),
  status: null,
  duration_ms: 0,
});

/** The attempt a change ended, but for its number (the recorder reads it off the record). */
const attemptOf = (
  outcome: AttemptOutcome,
  timing: AttemptTiming,
  error?: string,
): Omit<AttemptRecord, 'attempt'> => ({
  started_at: timing.started_at,
  finished_at: isoNow(),
  outcome,
  status: timing.status,
  error: error === undefined ? null : boundedError(error),
  duration_ms: timing.duration_ms,
});
