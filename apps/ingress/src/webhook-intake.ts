import { createHash, randomBytes } from 'node:crypto';
import { Job } from 'bullmq';
import type { Queue } from 'bullmq';
import {
  ackBucketSeconds,
  actionJobs,
  annotateSpan,
  deadLetterSeconds,
  orderTime,
  findAck,
  INTAKE_COMMAND,
  inProducerSpan,
  jobTraceMetadata,
  keys,
  RetryableError,
  traceFields,
} from '@pw/shared';
import type {
  Acknowledgement,
  ActionJobData,
  ActionName,
  ActionsConfig,
  BackoffPolicy,
  ErrorCode,
  EventType,
  OutcomeStore,
  WebhookJobData,
} from '@pw/shared';

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
  /** The most webhooks sent to Redis in one transaction. @defaultValue 256 */
  maxBatch?: number;
}

export interface AcceptedWebhook {
  ack: Acknowledgement;
  /** True when this delivery repeats one already acknowledged. */
  duplicate: boolean;
}

export interface IncomingWebhook {
  eventType: EventType;
  entityId: string;
  /** The event without `signature`, in the order received. */
  event: Record<string, unknown>;
  /** Its canonical JSON: equal for repeated deliveries. */
  canonical: string;
  actions: ActionName[];
}

interface Pending {
  webhook: WebhookJobData;
  /** Its action jobs, refused by BullMQ as duplicates when the webhook is a repeat. */
  jobs: Job<ActionJobData>[];
  /** The SHA-256 of the event's canonical JSON. */
  digest: string;
  /** The request's trace, kept with the webhook's record; null without tracing. */
  traceId: string | null;
  resolve(accepted: AcceptedWebhook): void;
  reject(error: unknown): void;
}

const ID_BYTES = 16;
let idPool = Buffer.alloc(0);
let idOffset = 0;

/**
 * An unguessable id: 128 random bits, cut from a pool filled 4 KB at a time (one call to the
 * system's random source for 256 ids instead of one each).
 */
export function newWebhookId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 256);
    idOffset = 0;
  }
  const id = idPool.toString('base64url', idOffset, idOffset + ID_BYTES);
  idOffset += ID_BYTES;
  return `wh_${id}`;
}

/** The ack of a webhook, from its job: the first delivery's and every repeat's. */
const ackOf = (data: WebhookJobData): Acknowledgement => ({
  received: true,
  processed_at: data.received_at,
  webhook_id: data.webhook_id,
  actions_triggered: data.actions,
});

/** The queue did not take the webhook: the sender is answered 503 `unavailable` and retries. */
const unavailable = (cause?: unknown) =>
  new RetryableError('unavailable' satisfies ErrorCode, 'the queue did not accept the webhook', {
    cause,
  });

/**
 * Deduplicates and durably enqueues accepted webhooks: for each, in one Redis transaction, the
 * intake script (`INTAKE_COMMAND`: the deduplication key of the SHA-256 of the event's canonical
 * JSON for `DEDUP_WINDOW_SECONDS`, the entity's newest event time, the outcome record, the kept
 * ack, the counts) and BullMQ's add of each of its action jobs. A new webhook gets its record and
 * its jobs, or nothing; a repeat gets the first delivery's id and adds nothing (its action jobs
 * are refused as duplicates). Webhooks that arrive together share one transaction (one round
 * trip): the first of a batch is sent once the current turn of the event loop is over, so a lone
 * request waits for nothing.
 */
export class WebhookIntake {
  private pending: Pending[] = [];
  private flushScheduled = false;

  /**
   * How long the deduplication key is kept: as long as the event can still be accepted. An event
   * dated up to MAX_CLOCK_SKEW_SECONDS ahead stays acceptable for DEDUP_WINDOW_SECONDS after that
   * date, so a captured signed event can never run twice, however late it is replayed. A minute
   * more covers clocks of several ingress hosts that differ a little (the window is judged on the
   * host's clock, the key expires on Redis's).
   */
  private readonly dedupSeconds: number;

  /** Whether the queue's client has the intake command. */
  private commandDefined = false;

  constructor(
    private readonly actionsQueue: Queue<ActionJobData>,
    private readonly outcomes: OutcomeStore,
    private readonly settings: IntakeSettings,
  ) {
    this.dedupSeconds = settings.dedupWindowSeconds + settings.maxClockSkewSeconds + 60;
  }

  /** Enqueues the webhook, or answers a repeat with its first ack (a producer span, tracing on). */
  accept(incoming: IncomingWebhook, now = new Date()): Promise<AcceptedWebhook> {
    return inProducerSpan('enqueue actions', () => this.enqueue(incoming, now));
  }

  private enqueue(incoming: IncomingWebhook, now: Date): Promise<AcceptedWebhook> {
    const digest = createHash('sha256').update(incoming.canonical).digest('hex');
    const webhook: WebhookJobData = {
      webhook_id: newWebhookId(),
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
      received_at: now.toISOString(),
      actions: incoming.actions,
      event: incoming.event,
    };
    annotateSpan({
      webhook_id: webhook.webhook_id,
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
    });
    const jobs = this.actionJobsOf(webhook);
    const traceId = traceFields().trace_id ?? null;
    return new Promise((resolve, reject) => {
      this.pending.push({ webhook, jobs, digest, traceId, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * One job per action, each with a BullMQ deduplication id of its own job id: unique, so a new
   * webhook's jobs are added (the key lives a millisecond), while a repeat's are refused, since the
   * intake script has just written those keys.
   */
  private actionJobsOf(webhook: WebhookJobData): Job<ActionJobData>[] {
    // With tracing on, each job carries the request's trace for the worker's spans to continue
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

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending.splice(0, this.settings.maxBatch ?? 256);
    if (this.pending.length > 0) {
      this.flushScheduled = true;
      setImmediate(() => void this.flush());
    }
    let results: [Error | null, unknown][] | null;
    try {
      const client = await this.actionsQueue.backend.client;
      if (!this.commandDefined) {
        // Its number of keys comes first in each call (ioredis's form when none is defined),
        // which BullMQ's client type does not allow for.
        client.defineCommand(
          INTAKE_COMMAND.name,
          INTAKE_COMMAND as { numberOfKeys: number; lua: string },
        );
        this.commandDefined = true;
      }
      const transaction = client.multi();
      for (const entry of batch) {
        this.outcomes.intake(transaction, entry.webhook, this.intakeKeys(entry));
        // Each add's reply is read from the transaction's replies below.
        for (const job of entry.jobs) job.addJob(transaction).catch(() => undefined);
      }
      results = await transaction.exec();
    } catch (error) {
      for (const entry of batch) entry.reject(unavailable(error));
      return;
    }
    const repeats: { entry: Pending; firstId: string }[] = [];
    let reply = 0;
    for (const entry of batch) {
      // One reply for the intake, then one per action job.
      const [error, id] = results?.[reply] ?? [new Error('no reply'), null];
      const adds = results?.slice(reply + 1, reply + 1 + entry.jobs.length) ?? [];
      reply += 1 + entry.jobs.length;
      if (error || typeof id !== 'string') entry.reject(unavailable(error));
      else if (id !== entry.webhook.webhook_id) repeats.push({ entry, firstId: id });
      else if (adds.length < entry.jobs.length || adds.some(([failed]) => failed))
        entry.reject(unavailable(adds.find(([failed]) => failed)?.[0]));
      else entry.resolve({ ack: ackOf(entry.webhook), duplicate: false });
    }
    if (repeats.length > 0) await this.answerRepeats(repeats);
  }

  private intakeKeys(entry: Pending) {
    const { queuePrefix: prefix, recordTtlSeconds } = this.settings;
    return {
      dedupKey: keys.dedup(prefix, entry.digest),
      dedupMs: this.dedupSeconds * 1000,
      eventTimeMs: orderTime(entry.webhook.event, Date.parse(entry.webhook.received_at)),
      // As long as an older event of the entity may still be retried.
      latestKeepMs: deadLetterSeconds(recordTtlSeconds) * 1000,
      actionDedupKeys: entry.jobs.map((job) => `${this.actionsQueue.keys.de}:${job.id}`),
      ackSeconds: ackBucketSeconds(this.dedupSeconds),
      traceId: entry.traceId,
    };
  }

  /** Repeats get the first delivery's ack, read from the ack kept for the deduplication window. */
  private async answerRepeats(repeats: { entry: Pending; firstId: string }[]): Promise<void> {
    await Promise.all(
      repeats.map(async ({ entry, firstId }) => {
        try {
          entry.resolve({ ack: await this.firstAck(firstId, entry.webhook), duplicate: true });
        } catch (error) {
          entry.reject(unavailable(error));
        }
      }),
    );
  }

  private async firstAck(firstId: string, repeat: WebhookJobData): Promise<Acknowledgement> {
    const client = await this.actionsQueue.backend.client;
    const kept = await findAck(
      client,
      this.settings.queuePrefix,
      firstId,
      this.dedupSeconds,
      Date.parse(repeat.received_at),
    );
    if (kept) {
      return ackOf({
        ...repeat,
        webhook_id: firstId,
        received_at: kept.received_at,
        actions: kept.actions as ActionName[],
      });
    }
    // Without it (deleted by hand within the window) the event was still delivered: answer with
    // its id rather than run it again.
    return ackOf({ ...repeat, webhook_id: firstId });
  }
}
