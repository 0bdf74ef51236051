import { createHash } from 'node:crypto';
import { Job } from 'bullmq';
import type { Queue } from 'bullmq';
import type { ActionsConfig } from '../actions/actions-config.js';
import type { Acknowledgement } from '../events/acknowledgement.js';
import type { ErrorCode } from '../events/error-codes.js';
import { RetryableError } from '../errors.js';
import type { OutcomeStore } from '../outcomes/outcome-store.js';
import { actionJobs } from '../queue/action-jobs.js';
import { deadLetterSeconds, eventTime, keys, orderTime } from '../queue/queues.js';
import type { ActionJobData, BackoffPolicy, AcceptedWebhook } from '../queue/queues.js';
import { withCommand } from '../redis.js';
import type { LuaCommand, RedisClient } from '../redis.js';
import { canonicalJson } from '../signing/canonical-json.js';
import { jobTraceMetadata, traceFields } from '../tracing.js';
import { ackOf, firstAck } from './first-ack.js';
import { addQuarantineEnd, INTAKE_COMMAND, QUARANTINE_END_COMMAND } from './intake-commands.js';
import type { IntakeKeys } from './intake-commands.js';
import { dedupEntry, dedupKeepMs } from './kept-acks.js';

export interface IntakeSettings {
  queuePrefix: string;
  /** How long a delivered event is remembered (`DEDUP_WINDOW_SECONDS`). */
  dedupWindowSeconds: number;
  /** How far ahead an event's `timestamp` may be (`MAX_CLOCK_SKEW_SECONDS`). */
  maxClockSkewSeconds: number;
  /** How long finished jobs are kept (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
  /** Per-action attempts and backoff (`ACTIONS_CONFIG`). */
  actionsConfig: ActionsConfig;
  /** The default retry policy (`ACTION_ATTEMPTS`, `ACTION_BACKOFF`, `ACTION_BACKOFF_DELAY_MS`). */
  retry: { attempts: number; backoff: BackoffPolicy };
}

export interface IntakeResult {
  ack: Acknowledgement;
  /** True when this delivery repeats one already acknowledged. */
  duplicate: boolean;
}

/** A webhook made ready for the intake's transaction (`WebhookIntake.prepare`). */
export interface PreparedWebhook {
  webhook: AcceptedWebhook;
  /** Its action jobs, refused by BullMQ as duplicates when the webhook is a repeat. */
  jobs: Job<ActionJobData>[];
  /** The SHA-256 of the event's canonical JSON. */
  digest: string;
  /** The trace current when it was prepared, kept with its record; null without tracing. */
  traceId: string | null;
}

/** A prepared webhook and how its sender learns the answer. */
export interface IntakeEntry extends PreparedWebhook {
  resolve(accepted: IntakeResult): void;
  reject(error: unknown): void;
}

/** Replies of a transaction, as ioredis gives them: `[error, result]` per command. */
type Replies = [Error | null, unknown][];

/** The transaction did not take the webhook: the sender is answered 503 `unavailable`. */
export const intakeUnavailable = (cause?: unknown) =>
  new RetryableError('unavailable' satisfies ErrorCode, 'the queue did not accept the webhook', {
    cause,
  });

/**
 * The one way a webhook enters the system, for the ingress and for every test harness alike:
 * for each webhook, in one Redis transaction, the intake script (`INTAKE_COMMAND`: the
 * deduplication key of the SHA-256 of the event's canonical JSON for `DEDUP_WINDOW_SECONDS`, the
 * entity's newest event time, the outcome record, the kept ack, the counts, the record-stream
 * entry) and BullMQ's add of each of its action jobs. A new webhook gets its record and its jobs,
 * or nothing; a repeat gets the first delivery's ack and adds nothing (its action jobs are refused
 * as duplicates). Several webhooks may share one transaction (`takeIn`).
 */
export class WebhookIntake {
  /**
   * How long the deduplication key is kept: as long as the event can still be accepted. An event
   * dated up to MAX_CLOCK_SKEW_SECONDS ahead stays acceptable for DEDUP_WINDOW_SECONDS after that
   * date, so a captured signed event can never run twice, however late it is replayed. A minute
   * more covers clocks of several ingress hosts that differ a little (the window is judged on the
   * host's clock, the key expires on Redis's).
   */
  private readonly dedupSeconds: number;

  /** The Lua commands the queue's client has been given. */

  constructor(
    private readonly actionsQueue: Queue<ActionJobData>,
    private readonly outcomes: OutcomeStore,
    private readonly settings: IntakeSettings,
  ) {
    this.dedupSeconds = settings.dedupWindowSeconds + settings.maxClockSkewSeconds + 60;
  }

  /** Takes one webhook in, in a transaction of its own: its ack, or the first delivery's. */
  accept(webhook: AcceptedWebhook, canonical?: string): Promise<IntakeResult> {
    const prepared = this.prepare(webhook, canonical);
    return new Promise((resolve, reject) => {
      void this.takeIn([{ ...prepared, resolve, reject }]);
    });
  }

  /**
   * Readies `webhook` for `takeIn`: its digest and its action jobs, which carry the trace current
   * now (the request's), as BullMQ's own add would. `canonical`: the event's canonical JSON, if
   * already made (the ingress makes it to check the signature).
   */
  prepare(webhook: AcceptedWebhook, canonical = canonicalJson(webhook.event)): PreparedWebhook {
    return {
      webhook,
      jobs: this.actionJobsOf(webhook),
      digest: createHash('sha256').update(canonical).digest('hex'),
      traceId: traceFields().trace_id ?? null,
    };
  }

  /**
   * Takes `batch` in, in one Redis transaction (one round trip), and settles each entry: its ack,
   * the first delivery's for a repeat, or a `RetryableError` (`unavailable`). Never rejects.
   */
  async takeIn(batch: readonly IntakeEntry[]): Promise<void> {
    let replies: Replies | null;
    try {
      replies = await this.exec(batch);
    } catch (error) {
      for (const entry of batch) entry.reject(intakeUnavailable(error));
      return;
    }
    const repeats: { entry: IntakeEntry; firstId: string }[] = [];
    let reply = 0;
    for (const entry of batch) {
      // One reply for the intake, then one per action job.
      const [error, id] = replies?.[reply] ?? [new Error('no reply'), null];
      const adds = replies?.slice(reply + 1, reply + 1 + entry.jobs.length) ?? [];
      reply += 1 + entry.jobs.length;
      if (error || typeof id !== 'string') entry.reject(intakeUnavailable(error));
      else if (id !== entry.webhook.webhook_id) repeats.push({ entry, firstId: id });
      else if (adds.length < entry.jobs.length || adds.some(([failed]) => failed))
        entry.reject(intakeUnavailable(adds.find(([failed]) => failed)?.[0]));
      else entry.resolve({ ack: ackOf(entry.webhook), duplicate: false });
    }
    if (repeats.length > 0) await this.answerRepeats(repeats);
  }

  /** The intake script and the job adds of every entry, sent as one MULTI/EXEC. */
  private async exec(batch: readonly IntakeEntry[]): Promise<Replies | null> {
    const client = await this.clientWith(INTAKE_COMMAND);
    const transaction = client.multi();
    for (const entry of batch) {
      this.outcomes.intake(transaction, entry.webhook, this.intakeKeys(entry));
      // Each add's reply is read from the transaction's replies.
      for (const job of entry.jobs) job.addJob(transaction).catch(() => undefined);
    }
    return transaction.exec();
  }

  /**
   * Ends the quarantine of a quarantined webhook of this partition, in one transaction
   * (`QUARANTINE_END_COMMAND`): `release` takes it in as an ordinary webhook with its own id
   * (`webhook`: as it runs now, its actions chosen; its record, its kept ack made ordinary, its
   * entity's newest time, its action jobs), `discard` ends it. False when it was no longer
   * quarantined (released or discarded meanwhile): nothing changed, no job added.
   * `storedNewestMs`: the entity's newest event time the record store knows, which a release is
   * judged against besides Redis's (`RecordStore.newestEventTime`). Throws when
   * Redis did not take it (`intakeUnavailable`).
   */
  async endQuarantine(
    webhook: AcceptedWebhook,
    mode: 'release' | 'discard',
    storedNewestMs?: number,
  ): Promise<boolean> {
    const jobs = mode === 'release' ? this.actionJobsOf(webhook) : [];
    const { queuePrefix, recordTtlSeconds } = this.settings;
    let replies: Replies | null;
    try {
      const client = await this.clientWith(QUARANTINE_END_COMMAND);
      const transaction = client.multi();
      const digest = createHash('sha256').update(canonicalJson(webhook.event)).digest('hex');
      addQuarantineEnd(transaction, { queuePrefix, recordTtlSeconds }, webhook, mode, {
        dedup: dedupEntry(queuePrefix, eventTime(webhook.event), digest),
        eventTimeMs: webhook.order_ms ?? orderTime(webhook.event, Date.parse(webhook.received_at)),
        latestKeepMs: deadLetterSeconds(recordTtlSeconds) * 1000,
        actionDedupKeys: jobs.map((job) => `${this.actionsQueue.keys.de}:${job.id}`),
        storedNewestMs,
      });
      for (const job of jobs) job.addJob(transaction).catch(() => undefined);
      replies = await transaction.exec();
    } catch (error) {
      throw intakeUnavailable(error);
    }
    const [error, changed] = replies?.[0] ?? [new Error('no reply'), null];
    if (error) throw intakeUnavailable(error);
    if (changed !== 1) return false;
    const failed = replies?.slice(1).find(([failure]) => failure);
    if (failed || (replies?.length ?? 0) < 1 + jobs.length) throw intakeUnavailable(failed?.[0]);
    return true;
  }

  /** The queue's client, given `command` (`withCommand`, which defines it once per client). */
  private async clientWith(command: LuaCommand) {
    const client = await this.actionsQueue.backend.client;
    // BullMQ's client, an ioredis client, typed by BullMQ: its transactions are what its adds take.
    withCommand(client as unknown as RedisClient, command);
    return client;
  }

  /**
   * One job per action, each with a BullMQ deduplication id of its own job id: unique, so a new
   * webhook's jobs are added (the key lives a millisecond), while a repeat's are refused, since the
   * intake script has just written those keys.
   */
  private actionJobsOf(webhook: AcceptedWebhook): Job<ActionJobData>[] {
    // With tracing on, each job carries the current trace for the worker's spans to continue
    // (what BullMQ's own add would do; these adds are the intake's transaction).
    const traceMetadata = jobTraceMetadata();
    const defaults = { ...this.settings.retry, recordTtlSeconds: this.settings.recordTtlSeconds };
    return actionJobs(webhook, this.settings.actionsConfig, defaults).map(
      ({ name, data, opts }) =>
        new Job(
          this.actionsQueue,
          name,
          data,
          {
            ...opts,
            deduplication: { id: opts.jobId ?? name, ttl: 1 },
            ...(traceMetadata ? { telemetry: { metadata: traceMetadata } } : {}),
          },
          opts.jobId,
        ),
    );
  }

  private intakeKeys(entry: PreparedWebhook): IntakeKeys {
    const { queuePrefix: prefix, recordTtlSeconds } = this.settings;
    const eventMs = eventTime(entry.webhook.event);
    return {
      dedup: dedupEntry(prefix, eventMs, entry.digest),
      dedupKeepMs: dedupKeepMs(
        eventMs,
        Date.parse(entry.webhook.received_at),
        this.dedupSeconds * 1000,
      ),
      legacyDedupKey: keys.legacyDedup(prefix, entry.digest),
      // A quarantined event is not applied: it must not make its entity's later events stale.
      eventTimeMs: entry.webhook.problems
        ? undefined
        : (entry.webhook.order_ms ??
          orderTime(entry.webhook.event, Date.parse(entry.webhook.received_at))),
      // As long as an older event of the entity may still be retried.
      latestKeepMs: deadLetterSeconds(recordTtlSeconds) * 1000,
      actionDedupKeys: entry.jobs.map((job) => `${this.actionsQueue.keys.de}:${job.id}`),
      traceId: entry.traceId,
    };
  }

  /** Repeats get the first delivery's ack, read from the ack kept for the deduplication window. */
  private async answerRepeats(repeats: { entry: IntakeEntry; firstId: string }[]): Promise<void> {
    const { queuePrefix: prefix } = this.settings;
    const settings = { queuePrefix: prefix, dedupSeconds: this.dedupSeconds };
    await Promise.all(
      repeats.map(async ({ entry, firstId }) => {
        try {
          const client = await this.actionsQueue.backend.client;
          const dedup = dedupEntry(prefix, eventTime(entry.webhook.event), entry.digest);
          entry.resolve({
            ack: await firstAck(client, settings, { firstId, entry: dedup, repeat: entry.webhook }),
            duplicate: true,
          });
        } catch (error) {
          entry.reject(intakeUnavailable(error));
        }
      }),
    );
  }
}
