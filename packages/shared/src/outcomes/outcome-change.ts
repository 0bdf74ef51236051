import { SHARED_LUA } from '../lua/lua-files.js';
import { luaCommand } from '../lua/lua-script.js';
import { ACTION_COUNTS_KEEP_SECONDS, channels, deadLetterSeconds, keys } from '../queue/queues.js';
import type { ActionCount } from '../queue/queues.js';
import { recordStreamKey } from '../records/record-changes.js';
import type { AttemptOutcome, AttemptRecord } from '../records/record-changes.js';
import { boundedError } from './bounded-error.js';
import { outcomeKey } from './outcome-keys.js';
import type { OutcomeStoreSettings } from './outcome-keys.js';
import { countMinuteNow, isoNow } from './time-stamps.js';

/** The constants of `outcomeChange` (lua/includes/outcomeChange.lua), for every script with it. */
export const OUTCOME_CHANGE_CONSTANTS = { ACTION_COUNTS_KEEP_SECONDS };

/** One change to an outcome record (lua/outcome-change-3.lua). */
export const OUTCOME_CHANGE_COMMAND = luaCommand({
  name: 'pwOutcomeChange',
  file: 'outcome-change-3.lua',
  sources: [SHARED_LUA],
  constants: OUTCOME_CHANGE_CONSTANTS,
});

export interface OutcomeChangeCommand {
  /** The action's attempts after the change when it counted one, else 1; 0: the record is gone. */
  pwOutcomeChange(...args: (string | number)[]): Promise<number>;
}

/** How a call ended, as the action processor saw it: the rest of an `AttemptRecord`. */
export interface AttemptTiming {
  started_at: string;
  /** The partner's HTTP status; null without an answer. */
  status: number | null;
  duration_ms: number;
}

/** What a change does besides setting the action's fields. */
export interface ChangeOptions {
  countAttempt?: boolean;
  remove?: string[];
  record?: Record<string, string>;
  attempt?: Omit<AttemptRecord, 'attempt'>;
  unrecorded?: boolean;
  count?: ActionCount;
}

/** The keys and arguments of one call of `outcomeChange`. */
export interface ChangeCall {
  keys: string[];
  args: (string | number)[];
}

/**
 * The keys and arguments of `outcomeChange` (lua/includes/outcomeChange.lua lays them out) that
 * set the action's `fields` (and the webhook's `record` fields), remove the `remove` fields, count
 * an attempt when `countAttempt`, add one to this minute's `count` (the console's trends), keep
 * the record at least as long as a dead letter, and append the record after the change (and the
 * `attempt` it ended) to the record stream unless `unrecorded`.
 */
export function outcomeChangeCall(
  settings: OutcomeStoreSettings,
  webhookId: string,
  action: string,
  fields: Record<string, string>,
  options: ChangeOptions = {},
): ChangeCall {
  // Built with loops: it runs twice per action (the call's start and its end).
  let removed = '';
  for (const field of options.remove ?? []) removed += `${removed ? ' ' : ''}${action}:${field}`;
  const args: (string | number)[] = [
    deadLetterSeconds(settings.recordTtlSeconds),
    channels.outcomeChanged(settings.queuePrefix),
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
      outcomeKey(settings.queuePrefix, webhookId),
      recordStreamKey(settings.queuePrefix),
      keys.actionCounts(settings.queuePrefix, countMinuteNow()),
    ],
    args,
  };
}

/** Timing of an attempt that made no call (a skip, a hold while the circuit is open). */
export const noCall = (): AttemptTiming => ({
  started_at: isoNow(),
  status: null,
  duration_ms: 0,
});

/** The attempt a change ended, but for its number (the recorder reads it off the record). */
export const attemptOf = (
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
