import { createHash, randomBytes } from 'node:crypto';
import { Job } from 'bullmq';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { keys, RetryableError, webhookJobOptions } from '@pw/shared';
import type { Acknowledgement, ActionName, WebhookJobData } from '@pw/shared';

/**
 * Claims an event's deduplication record, or returns the one already there.
 * KEYS[1] record; ARGV[1] ack JSON, ARGV[2] window in ms. Returns nil when claimed, else
 * { ack JSON, enqueued flag }.
 */
const CLAIM_LUA = `
local found = redis.call('HMGET', KEYS[1], 'ack', 'enqueued')
if found[1] then return found end
redis.call('HSET', KEYS[1], 'ack', ARGV[1], 'enqueued', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return false
`;

/**
 * Marks a record as enqueued, only if the job really is in Redis (a transaction does not roll
 * back when the add fails). KEYS[1] record, KEYS[2] job hash. Returns 1 when marked.
 */
const MARK_LUA = `
if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'enqueued', '1')
  return 1
end
return 0
`;

interface IntakeCommands {
  pwClaimWebhook(record: string, ack: string, windowMs: number): Promise<[string, string] | null>;
}

export interface IntakeSettings {
  queuePrefix: string;
  /** How long a delivered event is remembered (`DEDUP_WINDOW_SECONDS`). */
  dedupWindowSeconds: number;
  /** How long finished jobs are kept (`RECORD_TTL_SECONDS`). */
  recordTtlSeconds: number;
}

export interface AcceptedWebhook {
  ack: Acknowledgement;
  /** True when this delivery repeats one already acknowledged. */
  duplicate: boolean;
}

export interface IncomingWebhook {
  eventType: string;
  entityId: string;
  /** The event without `signature`, in the order received. */
  event: Record<string, unknown>;
  /** Its canonical JSON: equal for repeated deliveries. */
  canonical: string;
  actions: ActionName[];
}

/** An unguessable id: 128 random bits. */
export const newWebhookId = (): string => `wh_${randomBytes(16).toString('base64url')}`;

/**
 * Deduplicates and durably enqueues accepted webhooks. A first delivery claims a record holding
 * its ack, then adds the job and marks the record in one transaction; a repeat gets the stored
 * ack, and re-adds the job only if the first attempt never got it into Redis (the job id is the
 * webhook id, so two concurrent adds still make one job).
 */
export class WebhookIntake {
  private readonly redis: Redis & IntakeCommands;

  constructor(
    private readonly queue: Queue<WebhookJobData>,
    redis: Redis,
    private readonly settings: IntakeSettings,
  ) {
    if (!('pwClaimWebhook' in redis)) {
      redis.defineCommand('pwClaimWebhook', { numberOfKeys: 1, lua: CLAIM_LUA });
      redis.defineCommand('pwMarkEnqueued', { numberOfKeys: 2, lua: MARK_LUA });
    }
    this.redis = redis as Redis & IntakeCommands;
  }

  async accept(incoming: IncomingWebhook, now = new Date()): Promise<AcceptedWebhook> {
    const digest = createHash('sha256').update(incoming.canonical).digest('hex');
    const record = keys.dedup(this.settings.queuePrefix, digest);
    const fresh: Acknowledgement = {
      received: true,
      processed_at: now.toISOString(),
      webhook_id: newWebhookId(),
      actions_triggered: incoming.actions,
    };
    const found = await this.run(() =>
      this.redis.pwClaimWebhook(
        record,
        JSON.stringify(fresh),
        this.settings.dedupWindowSeconds * 1000,
      ),
    );
    if (found && found[1] === '1')
      return { ack: JSON.parse(found[0]) as Acknowledgement, duplicate: true };
    const ack = found ? (JSON.parse(found[0]) as Acknowledgement) : fresh;
    await this.enqueue(record, ack, incoming);
    return { ack, duplicate: found !== null };
  }

  private async enqueue(
    record: string,
    ack: Acknowledgement,
    incoming: IncomingWebhook,
  ): Promise<void> {
    const data: WebhookJobData = {
      webhook_id: ack.webhook_id,
      event_type: incoming.eventType,
      entity_id: incoming.entityId,
      received_at: ack.processed_at,
      actions: ack.actions_triggered,
      event: incoming.event,
    };
    const options = webhookJobOptions(ack.webhook_id, this.settings);
    const job = new Job(this.queue, incoming.eventType, data, options, ack.webhook_id);
    const client = await this.queue.backend.client;
    const transaction = client.multi();
    void job.addJob(transaction);
    transaction.runCommand('pwMarkEnqueued', [record, this.queue.toKey(ack.webhook_id)]);
    const results = await this.run(() => transaction.exec());
    const marked = results?.[1];
    if (!results || results.some(([error]) => error) || marked?.[1] !== 1) {
      const cause = results?.find(([error]) => error)?.[0];
      throw new RetryableError('unavailable', 'the queue did not accept the webhook', { cause });
    }
  }

  /** Redis failures become a RetryableError the ingress answers with 503. */
  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw new RetryableError('unavailable', 'the queue is not available', { cause: error });
    }
  }
}
