import { identifier } from '../events/fields.js';
import { SHARED_LUA } from '../lua/lua-files.js';
import { luaCommand } from '../lua/lua-script.js';
import { channels, DEAD_LETTER_MIN_SECONDS, deadLetterSeconds, keys } from '../queue/queues.js';
import type { AcceptedWebhook } from '../queue/queues.js';
import { INGRESS_COUNTS_KEEP_SECONDS } from '../records/ingress-counts.js';
import { recordStreamKey } from '../records/record-changes.js';
import type { WebhookEntry } from '../records/record-changes.js';
import { encodeAck } from './kept-acks.js';
import type { DedupEntry } from './kept-acks.js';
import { outcomeKey } from '../outcomes/outcome-keys.js';
import type { OutcomeStoreSettings } from '../outcomes/outcome-keys.js';
import { countMinute } from '../outcomes/time-stamps.js';
import { waitingAction } from '../outcomes/webhook-outcome.js';

/** Milliseconds a repeat's blocks on its own action jobs are kept: the transaction needs them. */
const REPEAT_BLOCK_MS = 10_000;

/**
 * The intake of a webhook, first in the transaction that adds its action jobs (lua/intake.lua):
 * deduplication, event order and record in one script. Its first argument is its number of keys.
 */
export const INTAKE_COMMAND = luaCommand({
  name: 'pwIntake',
  file: 'intake.lua',
  sources: [SHARED_LUA],
  constants: { REPEAT_BLOCK_MS, DEAD_LETTER_MIN_SECONDS, INGRESS_COUNTS_KEEP_SECONDS },
});

/**
 * The end of a quarantined webhook's quarantine (lua/quarantine-end.lua): its release, first in the
 * transaction that adds its action jobs, or its discard. Its first argument is its number of keys.
 */
export const QUARANTINE_END_COMMAND = luaCommand({
  name: 'pwQuarantineEnd',
  file: 'quarantine-end.lua',
  sources: [SHARED_LUA],
  constants: { REPEAT_BLOCK_MS },
});

/** What the intake of one webhook needs besides the webhook. */
export interface IntakeKeys {
  /** Where the event is remembered (`kept-acks.ts`), and how long its bucket is kept (ms). */
  dedup: DedupEntry;
  dedupKeepMs: number;
  /** The previous version's deduplication key of the event (`keys.legacyDedup`), read only. */
  legacyDedupKey: string;
  /** The event's time (ms; undefined: none), and how long its entity's newest time is kept (ms). */
  eventTimeMs: number | undefined;
  latestKeepMs: number;
  /** The BullMQ deduplication keys of the webhook's action jobs (see `INTAKE_COMMAND`). */
  actionDedupKeys: string[];
  /** The request's trace, kept in the record store; null without tracing. */
  traceId: string | null;
}

/** A pipeline that runs named Lua commands (BullMQ's client abstraction has one). */
export interface CommandPipeline {
  runCommand(name: string, args: (string | number | Buffer)[]): unknown;
}

/** `value` when it could be an identifier (the events' own rule), else null. */
const identifierOrNull = (value: unknown): string | null => {
  const checked = identifier.safeParse(value);
  return checked.success ? checked.data : null;
};

/** The accepted webhook as the record store takes it. */
export const webhookEntry = (job: AcceptedWebhook): WebhookEntry => ({
  webhook_id: job.webhook_id,
  event_type: job.event_type,
  entity_id: job.entity_id,
  // A quarantined event's may be anything: kept only when it could be one (it is indexed).
  customer_id: identifierOrNull(job.event.customer_id),
  received_at: job.received_at,
  actions: job.actions,
  event: job.event,
  ...(job.problems ? { problems: job.problems } : {}),
});

/**
 * The fields of a new webhook's record: its own, and each action's state, waiting; a quarantined
 * one (no action) says so.
 */
function intakeFields(job: AcceptedWebhook): string[] {
  const fields = [
    ['webhook_id', job.webhook_id],
    ['event_type', job.event_type],
    ['entity_id', job.entity_id],
    ['received_at', job.received_at],
    ['actions', JSON.stringify(job.actions)],
  ];
  for (const action of job.actions) fields.push([`${action}:state`, waitingAction(action).state]);
  if (job.problems) fields.push(['quarantined', '1']);
  return fields.flat();
}

/**
 * Adds to `transaction` the end of a quarantined webhook's quarantine (`QUARANTINE_END_COMMAND`,
 * which its client must have defined): `release`, `job` being the webhook as it runs now (its
 * actions chosen, no problems), or `discard`. Its reply is 1, or 0 when the webhook was no longer
 * quarantined (released or discarded already).
 */
export function addQuarantineEnd(
  transaction: CommandPipeline,
  settings: OutcomeStoreSettings,
  job: AcceptedWebhook,
  mode: 'release' | 'discard',
  intake: Pick<IntakeKeys, 'dedup' | 'eventTimeMs' | 'latestKeepMs' | 'actionDedupKeys'> & {
    /** The entity's newest event time the record store knows (ms), if any. */
    storedNewestMs?: number | undefined;
  },
): void {
  const prefix = settings.queuePrefix;
  const keyList = [
    outcomeKey(prefix, job.webhook_id),
    recordStreamKey(prefix),
    intake.dedup.key,
    keys.latest(prefix, job.event_type, job.entity_id),
    keys.quarantineEnded(prefix, job.webhook_id),
    ...intake.actionDedupKeys,
  ];
  const { problems: _problems, ...ordinary } = job;
  const fields = intakeFields(ordinary);
  if (mode === 'discard') fields.push('discarded', '1');
  transaction.runCommand(QUARANTINE_END_COMMAND.name, [
    keyList.length,
    ...keyList,
    deadLetterSeconds(settings.recordTtlSeconds),
    channels.outcomeChanged(prefix),
    job.webhook_id,
    mode,
    intake.dedup.field,
    // What a repeat is answered from now on: the actions it set off, or that it was discarded.
    encodeAck({ ...ordinary, quarantined: false, discarded: mode === 'discard' }),
    intake.eventTimeMs ?? '',
    intake.latestKeepMs,
    intake.storedNewestMs ?? '',
    ...fields,
  ]);
}

/**
 * Adds to `transaction` the intake of a webhook (`INTAKE_COMMAND`, which its client must have
 * defined): unless it repeats an event still remembered, its record, `queued` with every action
 * waiting, exists from the acknowledgement on. Its reply is the first delivery's id.
 */
export function addIntake(
  transaction: CommandPipeline,
  settings: OutcomeStoreSettings,
  job: AcceptedWebhook,
  intake: IntakeKeys,
): void {
  const prefix = settings.queuePrefix;
  const minute = countMinute(new Date(job.received_at));
  const keyList = [
    intake.dedup.key,
    outcomeKey(prefix, job.webhook_id),
    recordStreamKey(prefix),
    intake.legacyDedupKey,
    keys.ingressCounts(prefix, minute),
    keys.ingressCountsChanged(prefix),
    keys.latest(prefix, job.event_type, job.entity_id),
    ...intake.actionDedupKeys,
  ];
  transaction.runCommand(INTAKE_COMMAND.name, [
    keyList.length,
    ...keyList,
    intake.dedup.field,
    intake.dedupKeepMs,
    settings.recordTtlSeconds,
    channels.outcomeChanged(prefix),
    job.webhook_id,
    JSON.stringify({ ...webhookEntry(job), trace_id: intake.traceId }),
    encodeAck({ ...job, quarantined: job.problems !== undefined }),
    minute,
    intake.eventTimeMs ?? '',
    intake.latestKeepMs,
    ...intakeFields(job),
  ]);
}
