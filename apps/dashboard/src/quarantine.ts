import { EVENT_REGISTRY, NUL_PROBLEM, recheckEvent } from '@pw/shared/events';
import { selectActions } from '@pw/shared/rules';
import type { EventDefinition, EventType, Problem } from '@pw/shared/events';
import type { PartitionedIntake } from '@pw/shared/intake';
import type { AcceptedWebhook } from '@pw/shared/queue';
import type { RulesStore } from '@pw/shared/rules';
import type { RecordStore } from '@pw/records';
import type {
  BulkRelease,
  QuarantinedEvent,
  QuarantinedSummary,
  ReleasePreview,
  ReleaseResult,
} from '@pw/shared/operator-api';

export type { BulkRelease, ReleasePreview, ReleaseResult };
import { DASHBOARD_ERROR_CODES, DashboardError } from './error-response.js';
import { fromRecordStore } from './record-store-errors.js';

/** The filters of a bulk release: those of `GET /api/quarantine`, without paging. */
export interface QuarantineFilter {
  event_type?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface QuarantineDeps {
  /** The intake of every partition: a release is taken in where the webhook was kept. */
  intake: Pick<PartitionedIntake, 'endQuarantine'>;
  /** The record store: the kept event, the list, and the entity's newest event time. */
  records: Pick<
    RecordStore,
    'webhook' | 'quarantined' | 'quarantineSummaries' | 'quarantinedEvents' | 'newestEventTime'
  >;
  /** The routing rules a released webhook's actions are chosen by, as the ingress's are. */
  rules: Pick<RulesStore, 'read'>;
  /**
   * The event definitions whose schemas judge a kept event again: the running code's. @defaultValue
   * EVENT_REGISTRY
   */
  events?: Readonly<Record<EventType, EventDefinition>>;
}

/** A bulk release's counts before its first release. */
export const newBulkRelease = (): BulkRelease => ({
  released: 0,
  still_invalid: 0,
  not_quarantined: 0,
  webhooks: [],
});

/** What a list or a bulk release shows of each: the first this many. */
export const SHOWN = 100;
/** Quarantined webhooks' summaries read from the store at a time while going through every page. */
const PAGE = 500;
/**
 * The most bytes of kept events a dry run reads from the store at once (one event more when a
 * single one is larger): what it holds in memory does not grow with the events' number or weight.
 */
export const EVENT_BYTES_AT_ONCE = 2_000_000;

const { notFound, notQuarantined, queueUnavailable } = DASHBOARD_ERROR_CODES;

/**
 * `summaries` in runs whose events together weigh at most `EVENT_BYTES_AT_ONCE` (a heavier event
 * alone), in their order.
 */
function byWeight(summaries: readonly QuarantinedSummary[]): QuarantinedSummary[][] {
  const batches: QuarantinedSummary[][] = [];
  let batch: QuarantinedSummary[] = [];
  let bytes = 0;
  for (const summary of summaries) {
    if (batch.length > 0 && bytes + summary.size > EVENT_BYTES_AT_ONCE) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(summary);
    bytes += summary.size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** 503 `queue_unavailable`: Redis did not take the change (nothing was changed, or all of it). */
const queueAway = (cause: unknown) =>
  new DashboardError(503, queueUnavailable, 'Redis did not take the change; try again shortly', {
    cause,
    retryAfterSeconds: 5,
  });

/**
 * What operators do with quarantined webhooks (authentic events that failed their schema, kept
 * without running any action; docs/webhook-api.md → Quarantine): release one or many once the
 * running code's schema accepts them, or discard one with a reason. The kept event is read from
 * the record store; the change itself is made in Redis, in the webhook's partition, where a
 * script checks that it is still quarantined (so two operators, or a release and a discard, never
 * both act on it).
 */
export class Quarantine {
  private readonly events: Readonly<Record<EventType, EventDefinition>>;

  constructor(private readonly deps: QuarantineDeps) {
    this.events = deps.events ?? EVENT_REGISTRY;
  }

  /**
   * Judges the kept event again with the running schema: if it passes, it runs as an ordinary
   * webhook with its own id (its actions chosen by the current rules; the out-of-order guard
   * applies); else its problems now. Throws 404 for a webhook the store does not have and 409
   * `not_quarantined` for one that is not quarantined (any more).
   */
  async release(webhookId: string): Promise<ReleaseResult> {
    const kept = await this.kept(webhookId);
    const verdict = this.judge(kept);
    if ('problems' in verdict) {
      return { webhook_id: webhookId, outcome: 'still_invalid', problems: verdict.problems };
    }
    const { definition, entityId } = verdict;
    const [rules, storedNewestMs] = await Promise.all([
      this.deps.rules.read().catch((error: unknown) => Promise.reject(queueAway(error))),
      fromRecordStore(() => this.deps.records.newestEventTime(definition.type, entityId)),
    ]);
    const webhook: AcceptedWebhook = {
      webhook_id: webhookId,
      event_type: definition.type,
      entity_id: entityId,
      received_at: kept.received_at,
      actions: selectActions(definition.type, kept.event, rules.rules),
      event: kept.event,
    };
    if (!(await this.endQuarantine(webhook, 'release', storedNewestMs))) {
      return { webhook_id: webhookId, outcome: 'not_quarantined' };
    }
    return { webhook_id: webhookId, outcome: 'released', actions_triggered: webhook.actions };
  }

  /** Ends a quarantined webhook without running it; 404 and 409 as for `release`. */
  async discard(webhookId: string): Promise<boolean> {
    const kept = await this.kept(webhookId);
    return this.endQuarantine(
      {
        webhook_id: webhookId,
        event_type: kept.event_type as EventType,
        entity_id: kept.entity_id,
        received_at: kept.received_at,
        actions: [],
        event: kept.event,
      },
      'discard',
    );
  }

  /**
   * The kept event of a quarantined webhook, with its summary and every problem; 404 and 409 as for
   * `release`.
   */
  async event(webhookId: string): Promise<QuarantinedEvent> {
    const kept = await this.kept(webhookId);
    const summaries = await fromRecordStore(() =>
      this.deps.records.quarantineSummaries([webhookId]),
    );
    const summary = summaries.get(webhookId);
    return {
      webhook_id: webhookId,
      event_type: kept.event_type,
      entity_id: kept.entity_id,
      received_at: kept.received_at,
      size: summary?.size ?? 0,
      problem_count: kept.problems?.length ?? 0,
      problems: kept.problems ?? [],
      event: kept.event,
    };
  }

  /**
   * A bulk release's dry run: each quarantined webhook the filter matches, judged again by the
   * check a release makes (`judge`). The events are read `EVENT_BYTES_AT_ONCE` at a time.
   */
  async preview(filter: QuarantineFilter): Promise<ReleasePreview> {
    const preview: ReleasePreview = { would_release: 0, still_invalid: 0, quarantined: [] };
    for await (const summaries of this.pages(filter)) {
      for (const batch of byWeight(summaries)) {
        const events = await fromRecordStore(() =>
          this.deps.records.quarantinedEvents(batch.map((summary) => summary.webhook_id)),
        );
        for (const summary of batch) {
          const kept = events.get(summary.webhook_id);
          // Released or discarded since it was listed: not one a release would take.
          if (kept === undefined) continue;
          // Judged with every problem it was kept for, as a release judges it, not the summary's.
          const releasable = !('problems' in this.judge({ ...summary, ...kept }));
          if (releasable) preview.would_release += 1;
          else preview.still_invalid += 1;
          if (preview.quarantined.length < SHOWN)
            preview.quarantined.push({ ...summary, releasable });
        }
      }
    }
    return preview;
  }

  /**
   * Releases every quarantined webhook the filter matches, oldest last as listed (newest first):
   * the list is read whole first, so what is released meanwhile is not met again. `released` is
   * told of each release once it is made; `bulk` is counted into as they are made, so that a
   * caller still has the counts of a bulk release that failed part way (Redis or the store gone).
   */
  async releaseAll(
    filter: QuarantineFilter,
    released: (result: Extract<ReleaseResult, { outcome: 'released' }>) => Promise<void> = () =>
      Promise.resolve(),
    bulk: BulkRelease = newBulkRelease(),
  ): Promise<BulkRelease> {
    const ids: string[] = [];
    for await (const page of this.pages(filter)) ids.push(...page.map((kept) => kept.webhook_id));
    for (const id of ids) {
      let result: ReleaseResult;
      try {
        result = await this.release(id);
      } catch (error) {
        // Released or discarded since it was listed (or gone from the store): not one to release.
        if (!(error instanceof DashboardError) || error.status >= 500) throw error;
        result = { webhook_id: id, outcome: 'not_quarantined' };
      }
      if (result.outcome === 'released') await released(result);
      bulk[result.outcome] += 1;
      if (bulk.webhooks.length < SHOWN) bulk.webhooks.push(result);
    }
    return bulk;
  }

  /** `PartitionedIntake.endQuarantine`, Redis's failure answered 503. */
  private async endQuarantine(
    webhook: AcceptedWebhook,
    mode: 'release' | 'discard',
    storedNewestMs?: number,
  ) {
    try {
      return await this.deps.intake.endQuarantine(webhook, mode, storedNewestMs);
    } catch (error) {
      throw queueAway(error);
    }
  }

  /**
   * The check a release makes, and a dry run counts by: the kept event judged again by the running
   * code's schema. Its entity id and definition when it would run now; else its problems now.
   */
  private judge(kept: {
    event_type: string;
    entity_id: string;
    event: Record<string, unknown>;
    problems?: Problem[] | null;
  }): { definition: EventDefinition; entityId: string } | { problems: Problem[] } {
    const definition = this.events[kept.event_type as EventType];
    if (!definition)
      return { problems: [{ path: 'event_type', message: `no event type ${kept.event_type}` }] };
    // The store holds U+FFFD where the event held U+0000: its copy is not the event received.
    const nul = (kept.problems ?? []).filter((problem) => problem.message === NUL_PROBLEM);
    if (nul.length > 0) return { problems: nul };
    const checked = recheckEvent(definition, kept.event);
    if ('problems' in checked) return checked;
    // An entity id that did not read when the event arrived placed it in a partition of its
    // content's, not its entity's: the out-of-order guard could not see the entity's events there.
    if (checked.entityId !== kept.entity_id) {
      return {
        problems: [
          {
            path: definition.entityIdField,
            message:
              'did not read as an identifier when the event arrived, so it was kept apart from its entity; discard it and have the partner send it again',
          },
        ],
      };
    }
    return { definition, entityId: checked.entityId };
  }

  /** Every quarantined webhook the filter matches, newest first, a store page of summaries at a time. */
  private async *pages(filter: QuarantineFilter): AsyncGenerator<QuarantinedSummary[]> {
    let cursor: string | undefined;
    do {
      const page = await fromRecordStore(() =>
        this.deps.records.quarantined({ ...filter, limit: PAGE, cursor }),
      );
      yield page.quarantined;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** The store's copy of a quarantined webhook; 404 without one, 409 when it is not quarantined. */
  private async kept(webhookId: string) {
    const stored = await fromRecordStore(() => this.deps.records.webhook(webhookId));
    if (!stored) {
      throw new DashboardError(404, notFound, `No webhook ${webhookId} in the record store`);
    }
    if (stored.state !== 'quarantined' || stored.event === null) {
      throw new DashboardError(
        409,
        notQuarantined,
        `Webhook ${webhookId} is ${stored.state}, not quarantined: only a quarantined webhook is released or discarded`,
      );
    }
    return { ...stored, event: stored.event };
  }
}
