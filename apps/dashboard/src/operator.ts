import type { Job, Queue } from 'bullmq';
import { actionJobId, isActionName } from '@pw/shared';
import type { RecordStore, WebhookRecord } from '@pw/records';
import type { ActionJobData, OutcomeStore } from '@pw/shared';
import { fromRecordStore, recordStoreError, storeUnavailable } from './record-store-errors.js';

export interface DeadLetter {
  webhook_id: string;
  action: string;
  event_type: string;
  failed_reason: string;
  attempts: number;
  failed_at: string | null;
}

export interface DeadLetterFilter {
  action?: string;
  event_type?: string;
  /** On the failure time: from inclusive, to exclusive. */
  from?: Date;
  to?: Date;
}

/** What the operator reads of a webhook in the record store (its attempt history above all). */
export type StoredOutcomes = Pick<RecordStore, 'webhook'>;

/** What operators do with deliveries: read outcomes, list dead letters, replay failed actions. */
export class Operator {
  constructor(
    private readonly actions: Queue<ActionJobData>,
    private readonly outcomes: OutcomeStore,
    private readonly records?: StoredOutcomes,
  ) {}

  /**
   * A webhook's outcome record: its state from Redis while it is there (in flight, or finished
   * within `RECORD_TTL_SECONDS`), else from the record store; each action's `history` from the
   * store (empty for attempts the recorder has not written yet, or without a store).
   */
  async outcome(webhookId: string) {
    const [hot, stored] = await Promise.all([
      this.outcomes.get(webhookId),
      // The store away: a webhook Redis still has is answered from there, without history.
      this.stored(webhookId),
    ]);
    if (!hot) {
      if ('failure' in stored) throw stored.failure;
      return stored.record;
    }
    const record = 'record' in stored ? stored.record : null;
    const history = new Map(record?.actions.map((action) => [action.name, action.history]));
    return {
      // Known only to the store: null, not missing, until the recorder has written the webhook.
      trace_id: null,
      ...record,
      ...hot,
      actions: hot.actions.map((action) => ({
        ...action,
        history: history.get(action.name) ?? [],
      })),
    };
  }

  /**
   * The store's record (null when it has none or there is no store), or why it gave none: its
   * failure as the operator API answers it, or 503 when it did not answer within 2 s.
   */
  private async stored(
    webhookId: string,
  ): Promise<{ record: WebhookRecord | null } | { failure: unknown }> {
    if (!this.records) return { record: null };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<{ failure: unknown }>((resolve) => {
      timer = setTimeout(
        () => resolve({ failure: storeUnavailable(new Error('no answer within 2 s')) }),
        2000,
      );
    });
    try {
      return await Promise.race([
        this.records.webhook(webhookId).then(
          (record) => ({ record }),
          (error: unknown) => ({ failure: recordStoreError(error) }),
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Replays the failed actions of one webhook; returns their names (none: nothing had failed). */
  async replayWebhook(webhookId: string): Promise<string[] | null> {
    const outcome = await this.outcome(webhookId);
    if (!outcome) return null;
    const replayed: string[] = [];
    for (const action of outcome.actions.filter((a) => a.state === 'failed')) {
      const job = isActionName(action.name)
        ? await this.actions.getJob(actionJobId(webhookId, action.name))
        : undefined;
      if (job && (await this.replay(job))) replayed.push(action.name);
    }
    return replayed;
  }

  /** Actions that failed for good (attempts used up, or a permanent error), newest first. */
  async deadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetter[]> {
    const jobs = await this.failedJobs(filter);
    return jobs.map((job) => ({
      webhook_id: job.data.webhook_id,
      action: job.data.action,
      event_type: job.data.event_type,
      failed_reason: job.failedReason,
      attempts: job.attemptsMade,
      failed_at: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    }));
  }

  /** How many dead letters a bulk replay of `filter` would replay, and the first 100. */
  async dryRun(filter: DeadLetterFilter = {}) {
    const found = await this.deadLetters(filter);
    return { would_replay: found.length, dead_letters: found.slice(0, 100) };
  }

  /** Replays every dead letter matching `filter`. */
  async replayDeadLetters(
    filter: DeadLetterFilter = {},
  ): Promise<{ webhook_id: string; action: string }[]> {
    const replayed: { webhook_id: string; action: string }[] = [];
    for (const job of await this.failedJobs(filter)) {
      if (await this.replay(job))
        replayed.push({ webhook_id: job.data.webhook_id, action: job.data.action });
    }
    return replayed;
  }

  private async failedJobs(filter: DeadLetterFilter): Promise<Job<ActionJobData>[]> {
    const jobs = await this.actions.getFailed(0, -1);
    return jobs.filter(
      (job) =>
        (!filter.action || job.data.action === filter.action) &&
        (!filter.event_type || job.data.event_type === filter.event_type) &&
        (!filter.from || (job.finishedOn ?? 0) >= filter.from.getTime()) &&
        (!filter.to || (job.finishedOn ?? 0) < filter.to.getTime()),
    );
  }

  /** Back to waiting with its attempts renewed; the outcome record says `waiting` again. */
  private async replay(job: Job<ActionJobData>): Promise<boolean> {
    if (!(await job.isFailed())) return false;
    const webhookId = job.data.webhook_id;
    // A dead letter can outlive its record in Redis (BullMQ removes old failed jobs only as
    // others fail): the record comes back from the store first, for the replay to change.
    const records = this.records;
    if (records && !(await this.outcomes.get(webhookId))) {
      const stored = await fromRecordStore(() => records.webhook(webhookId));
      if (stored) await this.outcomes.restore(stored);
    }
    await this.outcomes.requeued(webhookId, job.data.action);
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  }
}
