import { createHash, randomBytes } from 'node:crypto';
import { Job } from 'bullmq';
import type { Queue } from 'bullmq';
import {
  annotateSpan,
  findAck,
  inProducerSpan,
  jobTraceMetadata,
  OPEN_ACCEPTED_COMMAND,
  RetryableError,
  traceFields,
  webhookJobOptions,
} from '@pw/shared';
import type {
  Acknowledgement,
  ActionName,
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
  /** The most webhooks sent to Redis in one pipeline. @defaultValue 256 */
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
  job: Job<WebhookJobData>;
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
 * Deduplicates and durably enqueues accepted webhooks in one Redis script per webhook: BullMQ's
 * add, with the SHA-256 of the event's canonical JSON as its deduplication id for
 * `DEDUP_WINDOW_SECONDS`. Either the job and its deduplication key are both written or neither
 * is, so a failure leaves nothing half done. A repeat gets the id of the first job, whose data
 * holds the first ack. Right after each add, in the same pipeline, the webhook's outcome record
 * is opened (`queued`) when the add created the job. Webhooks that arrive together are sent in one pipeline (one round trip):
 * the first of a batch is sent once the current turn of the event loop is over, so a lone
 * request waits for nothing.
 */
export class WebhookIntake {
  private pending: Pending[] = [];
  private flushScheduled = false;

  /**
   * How long the deduplication key (and the first job, whose data holds the first ack) is kept:
   * as long as the event can still be accepted. An event dated up to MAX_CLOCK_SKEW_SECONDS ahead
   * stays acceptable for DEDUP_WINDOW_SECONDS after that date, so a captured signed event can
   * never run twice, however late it is replayed. A minute more covers clocks of several ingress
   * hosts that differ a little (the window is judged on the host's clock, the key expires on Redis's).
   */
  private readonly dedupSeconds: number;

  /** Whether the queue's client has the command that opens outcome records. */
  private recordCommandDefined = false;

  constructor(
    private readonly queue: Queue<WebhookJobData>,
    private readonly outcomes: OutcomeStore,
    private readonly settings: IntakeSettings,
  ) {
    this.dedupSeconds = settings.dedupWindowSeconds + settings.maxClockSkewSeconds + 60;
  }

  /** Enqueues the webhook, or answers a repeat with its first ack (a producer span, tracing on). */
  accept(incoming: IncomingWebhook, now = new Date()): Promise<AcceptedWebhook> {
    return inProducerSpan('enqueue webhooks', () => this.enqueue(incoming, now));
  }

  private enqueue(incoming: IncomingWebhook, now: Date): Promise<AcceptedWebhook> {
    const digest = createHash('sha256').update(incoming.canonical).digest('hex');
    const webhookId = newWebhookId();
    const data: WebhookJobData = {
      webhook_id: webhookId,
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
      received_at: now.toISOString(),
      actions: incoming.actions,
      event: incoming.event,
    };
    annotateSpan({
      webhook_id: webhookId,
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
    });
    // With tracing on, the job carries the request's trace for the worker's spans to continue
    // (what BullMQ's own add would do; this add is the intake's script).
    const traceMetadata = jobTraceMetadata();
    const job = new Job(
      this.queue,
      incoming.eventType,
      data,
      {
        ...webhookJobOptions(webhookId, { recordTtlSeconds: this.settings.recordTtlSeconds }),
        deduplication: { id: digest, ttl: this.dedupSeconds * 1000 },
        ...(traceMetadata ? { telemetry: { metadata: traceMetadata } } : {}),
      },
      webhookId,
    );
    const traceId = traceFields().trace_id ?? null;
    return new Promise((resolve, reject) => {
      this.pending.push({ job, traceId, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
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
      const client = await this.queue.backend.client;
      if (!this.recordCommandDefined) {
        client.defineCommand(OPEN_ACCEPTED_COMMAND.name, OPEN_ACCEPTED_COMMAND);
        this.recordCommandDefined = true;
      }
      const pipeline = client.pipeline();
      for (const { job, traceId } of batch) {
        void job.addJob(pipeline);
        this.outcomes.openAccepted(
          pipeline,
          job.data,
          this.queue.toKey(job.data.webhook_id),
          this.dedupSeconds,
          traceId,
        );
      }
      results = await pipeline.exec();
    } catch (error) {
      for (const entry of batch) entry.reject(unavailable(error));
      return;
    }
    const repeats: { entry: Pending; firstId: string }[] = [];
    batch.forEach((entry, index) => {
      // Two replies per webhook: the add's (the job id) and the record's (not needed: the worker
      // opens the record too, should this one have failed).
      const [error, id] = results?.[2 * index] ?? [new Error('no reply'), null];
      if (error || typeof id !== 'string') entry.reject(unavailable(error));
      else if (id === entry.job.data.webhook_id)
        entry.resolve({ ack: ackOf(entry.job.data), duplicate: false });
      else repeats.push({ entry, firstId: id });
    });
    if (repeats.length > 0) await this.answerRepeats(repeats);
  }

  /**
   * Repeats get the first delivery's ack, read from the ack kept beside the deduplication key
   * (the first job leaves Redis `RECORD_TTL_SECONDS` after it finished), else from the job.
   */
  private async answerRepeats(repeats: { entry: Pending; firstId: string }[]): Promise<void> {
    await Promise.all(
      repeats.map(async ({ entry, firstId }) => {
        try {
          entry.resolve({ ack: await this.firstAck(firstId, entry.job.data), duplicate: true });
        } catch (error) {
          entry.reject(unavailable(error));
        }
      }),
    );
  }

  private async firstAck(firstId: string, repeat: WebhookJobData): Promise<Acknowledgement> {
    const client = await this.queue.backend.client;
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
    const first = await this.queue.getJob(firstId);
    // Without either (deleted by hand within the window) the event was still delivered: answer
    // with its id rather than run it again.
    return ackOf(first ? first.data : { ...repeat, webhook_id: firstId });
  }
}
