import type { Job } from 'bullmq';
import { isActionName } from '@pw/shared/actions';
import { sourceOfWebhook } from '@pw/shared/outcomes';
import type { OutcomeStore } from '@pw/shared/outcomes';
import { actionJobId } from '@pw/shared/queue';
import type { ActionJobData, ActionQueues } from '@pw/shared/queue';
import type { RedisClient } from '@pw/shared/runtime';
import type { RecordStore, WebhookRecord } from '@pw/records';
import { DeadLetters } from './dead-letters.js';
import type { DeadLetterFilter, DeadLetterPage } from './dead-letters.js';
import type { FailedEntry } from './failed-set.js';
import { fromRecordStore, recordStoreError, storeUnavailable } from './record-store-errors.js';

/** What the operator reads of a webhook in the record store (its attempt history above all). */
export type StoredOutcomes = Pick<RecordStore, 'webhook'>;

export interface OperatorDeps {
  /** The `actions` queue of every partition. */
  actions: ActionQueues;
  /** The outcome records of every partition, by partition. */
  outcomes: readonly OutcomeStore[];
  /** The connection `actions` was made with: dead letters are read from their failed sets. */
  redis: RedisClient;
  /** The record store, when there is one. */
  records?: StoredOutcomes | undefined;
}

/**
 * What operators do with deliveries: read outcomes, list dead letters, replay failed actions, in
 * every partition (a webhook's id names its own).
 */
export class Operator {
  private readonly actions: ActionQueues;
  private readonly outcomes: readonly OutcomeStore[];
  private readonly records: StoredOutcomes | undefined;
  private readonly letters: DeadLetters;

  constructor(deps: OperatorDeps) {
    this.actions = deps.actions;
    this.outcomes = deps.outcomes;
    this.records = deps.records;
    this.letters = new DeadLetters(deps.actions, deps.redis);
  }

  /**
   * A webhook's outcome record: its state from Redis while it is there (in flight, or finished
   * within `RECORD_TTL_SECONDS`), else from the record store; each action's `history` from the
   * store (empty for attempts the recorder has not written yet, or without a store).
   */
  async outcome(webhookId: string) {
    const [hot, stored] = await Promise.all([
      this.outcomesOf(webhookId).get(webhookId),
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
      problems: null,
      ...record,
      ...hot,
      actions: hot.actions.map((action) => ({
        ...action,
        history: history.get(action.name) ?? [],
      })),
    };
  }

  /** The outcome records of the webhook's partition. */
  private outcomesOf(webhookId: string): OutcomeStore {
    return sourceOfWebhook(this.actions.partitions, this.outcomes, webhookId);
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
        ? await this.actions.ofWebhook(webhookId).getJob(actionJobId(webhookId, action.name))
        : undefined;
      if (job && (await this.replay(job))) replayed.push(action.name);
    }
    return replayed;
  }

  /**
   * Actions that failed for good (attempts used up, or a permanent error), newest first, a page at
   * a time (`dead-letters.ts`).
   */
  deadLetters(
    filter: DeadLetterFilter,
    page: { limit: number; cursor?: FailedEntry },
  ): Promise<DeadLetterPage> {
    return this.letters.page(filter, page);
  }

  /** How many dead letters a bulk replay of `filter` would replay, and the first 100. */
  dryRun(filter: DeadLetterFilter = {}) {
    return this.letters.preview(filter, 100);
  }

  /** Replays every dead letter matching `filter`, newest first. */
  async replayDeadLetters(
    filter: DeadLetterFilter = {},
  ): Promise<{ webhook_id: string; action: string }[]> {
    const matching: FailedEntry[] = [];
    for await (const entry of this.letters.all(filter)) matching.push(entry);
    const replayed: { webhook_id: string; action: string }[] = [];
    for (const entry of matching) {
      const [job] = await this.letters.load([entry]);
      if (job && (await this.replay(job)))
        replayed.push({ webhook_id: job.data.webhook_id, action: job.data.action });
    }
    return replayed;
  }

  /** Back to waiting with its attempts renewed; the outcome record says `waiting` again. */
  private async replay(job: Job<ActionJobData>): Promise<boolean> {
    if (!(await job.isFailed())) return false;
    const webhookId = job.data.webhook_id;
    // A dead letter can outlive its record in Redis (BullMQ removes old failed jobs only as
    // others fail): the record comes back from the store first, for the replay to change.
    const records = this.records;
    const outcomes = this.outcomesOf(webhookId);
    if (records && !(await outcomes.get(webhookId))) {
      const stored = await fromRecordStore(() => records.webhook(webhookId));
      if (stored) await outcomes.restore(stored);
    }
    await outcomes.requeued(webhookId, job.data.action);
    if (!job.data.replayed) await job.updateData({ ...job.data, replayed: true });
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  }
}
