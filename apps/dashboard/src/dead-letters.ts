import type { Job } from 'bullmq';
import { actionsOf, isActionName } from '@pw/shared/actions';
import type { ActionName } from '@pw/shared/actions';
import { EVENT_TYPES } from '@pw/shared/events';
import type { EventType } from '@pw/shared/events';
import { actionOfJobId } from '@pw/shared/queue';
import type { ActionJobData, ActionQueues } from '@pw/shared/queue';
import type { RedisClient } from '@pw/shared/runtime';
import type { DeadLetter, DeadLetterPage } from '@pw/shared/operator-api';

export type { DeadLetter, DeadLetterPage };
import { FailedSet } from './failed-set.js';
import type { FailedEntry, FailedRange } from './failed-set.js';

export interface DeadLetterFilter {
  action?: string;
  event_type?: string;
  /** On the failure time: from inclusive, to exclusive. */
  from?: Date;
  to?: Date;
}

/** `limit` of `GET /api/dead-letters`. */
export const DEAD_LETTER_LIMIT = { default: 100, max: 500 } as const;

/** Ids a filtered page reads at most, in reads of `SCAN_CHUNK`, before it answers what it found. */
export const SCAN_BOUND = 10_000;
const SCAN_CHUNK = 1000;

/**
 * A cursor: base64url of `[failed_at (epoch ms), job id]`, the last dead letter of a page (or the
 * last one a filtered page read). A position, not an index: dead letters that arrive meanwhile
 * are newer and come before it, so the next page neither repeats nor skips one.
 */
export const encodeCursor = (entry: FailedEntry): string =>
  Buffer.from(JSON.stringify([entry.failedAt, entry.id])).toString('base64url');

/** The position a cursor names; undefined when it is not one `encodeCursor` could have made. */
export function decodeCursor(cursor: string): FailedEntry | undefined {
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(position) || position.length !== 2) return undefined;
    const [failedAt, id] = position as unknown[];
    if (!Number.isSafeInteger(failedAt) || (failedAt as number) < 0) return undefined;
    if (typeof id !== 'string' || id.length === 0 || id.length > 200) return undefined;
    return { failedAt: failedAt as number, id };
  } catch {
    return undefined;
  }
}

/**
 * The actions a filter can match, read from job ids (`<webhook_id>.<action>`; an action belongs to
 * one event type), so no job is loaded to filter: null for every action, an empty set for none.
 */
function actionsMatching(filter: DeadLetterFilter): ReadonlySet<ActionName> | null {
  if (filter.action === undefined && filter.event_type === undefined) return null;
  const byType =
    filter.event_type === undefined
      ? undefined
      : (EVENT_TYPES as readonly string[]).includes(filter.event_type)
        ? actionsOf(filter.event_type as EventType)
        : [];
  if (filter.action === undefined) return new Set(byType);
  const { action } = filter;
  if (!isActionName(action)) return new Set();
  return byType === undefined || byType.includes(action) ? new Set([action]) : new Set();
}

/** Whether an entry's job id names one of `accepted` (null: every action). */
const matcher =
  (accepted: ReadonlySet<ActionName> | null) =>
  (entry: FailedEntry): boolean => {
    if (accepted === null) return true;
    const action = actionOfJobId(entry.id);
    return action !== undefined && accepted.has(action);
  };

/** The failure times a filter covers, as the failed set's score bounds. */
const rangeOf = (filter: DeadLetterFilter): FailedRange => ({
  max: filter.to ? `(${filter.to.getTime()}` : '+inf',
  min: filter.from ? String(filter.from.getTime()) : '-inf',
});

/** Whether an entry falls in the filter's failure times. */
const inRange = (filter: DeadLetterFilter, entry: FailedEntry): boolean =>
  (!filter.from || entry.failedAt >= filter.from.getTime()) &&
  (!filter.to || entry.failedAt < filter.to.getTime());

/** A job of the failed set as a dead letter. */
export const toDeadLetter = (job: Job<ActionJobData>): DeadLetter => ({
  webhook_id: job.data.webhook_id,
  action: job.data.action,
  event_type: job.data.event_type,
  failed_reason: job.failedReason,
  attempts: job.attemptsMade,
  failed_at: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
});

/**
 * The dead letters (BullMQ's failed `actions` jobs of every partition), read from the failed sets
 * a page at a time, merged newest first: a page without an action or event type filter reads
 * `limit` + 1 ids from its position (of each partition); a filtered one reads ids only, at most
 * `SCAN_BOUND` of them, and loads only the jobs it answers with.
 */
export class DeadLetters {
  private readonly failed: FailedSet;

  /** `redis`: the connection the queues were made with. */
  constructor(
    private readonly actions: ActionQueues,
    redis: RedisClient,
  ) {
    this.failed = new FailedSet(
      redis,
      actions.all.map((queue) => queue.toKey('failed')),
    );
  }

  /** One page, newest first, after `cursor` (a position `encodeCursor` made). */
  async page(
    filter: DeadLetterFilter,
    options: { limit: number; cursor?: FailedEntry },
  ): Promise<DeadLetterPage> {
    const { limit } = options;
    const accepted = actionsMatching(filter);
    const matches = matcher(accepted);
    const range = rangeOf(filter);
    let position = this.start(filter, options.cursor);
    if (accepted?.size === 0 || position === null) return { dead_letters: [], next_cursor: null };
    const found: FailedEntry[] = [];
    let read = 0;
    let more = true;
    while (more && found.length <= limit && read < SCAN_BOUND) {
      const count = accepted === null ? limit + 1 - found.length : SCAN_CHUNK;
      const chunk = await this.failed.read(range, position, count);
      read += chunk.entries.length;
      found.push(...chunk.entries.filter(matches));
      more = chunk.more;
      position = chunk.entries.at(-1) ?? position;
    }
    const page = found.slice(0, limit);
    const last = found.length > limit ? page.at(-1) : more ? position : undefined;
    return {
      dead_letters: (await this.load(page)).map(toDeadLetter),
      next_cursor: last ? encodeCursor(last) : null,
    };
  }

  /**
   * Every dead letter `filter` matches, in order, as failed-set entries: ids only, all of them (a
   * count or a bulk replay).
   */
  async *all(filter: DeadLetterFilter): AsyncGenerator<FailedEntry> {
    const accepted = actionsMatching(filter);
    if (accepted?.size === 0) return;
    const matches = matcher(accepted);
    let position: FailedEntry | undefined;
    for (let more = true; more;) {
      const chunk = await this.failed.read(rangeOf(filter), position, SCAN_CHUNK);
      for (const entry of chunk.entries) if (matches(entry)) yield entry;
      more = chunk.more;
      position = chunk.entries.at(-1) ?? position;
    }
  }

  /**
   * How many dead letters `filter` matches and the first `first` of them (a bulk replay's dry
   * run): the count is one command when the filter names no action or event type.
   */
  async preview(
    filter: DeadLetterFilter,
    first: number,
  ): Promise<{ would_replay: number; dead_letters: DeadLetter[] }> {
    if (actionsMatching(filter) === null) {
      const [count, page] = await Promise.all([
        this.failed.count(rangeOf(filter)),
        this.page(filter, { limit: first }),
      ]);
      return { would_replay: count, dead_letters: page.dead_letters };
    }
    let count = 0;
    const head: FailedEntry[] = [];
    for await (const entry of this.all(filter)) {
      count += 1;
      if (head.length < first) head.push(entry);
    }
    return { would_replay: count, dead_letters: (await this.load(head)).map(toDeadLetter) };
  }

  /** The jobs of `entries` still there (one replayed or removed meanwhile is left out). */
  async load(entries: readonly FailedEntry[]): Promise<Job<ActionJobData>[]> {
    const jobs = await Promise.all(
      entries.map((entry) => this.actions.ofJob(entry.id).getJob(entry.id)),
    );
    return jobs.filter((job): job is Job<ActionJobData> => job !== undefined);
  }

  /**
   * Where a page starts: after the cursor when it lies in the filter's times, from the newest
   * without one or with a cursor newer than them; null when the cursor is older than them.
   */
  private start(filter: DeadLetterFilter, cursor?: FailedEntry): FailedEntry | undefined | null {
    if (!cursor || inRange(filter, cursor)) return cursor;
    return filter.from && cursor.failedAt < filter.from.getTime() ? null : undefined;
  }
}
