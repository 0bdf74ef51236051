import { setTimeout as sleep } from 'node:timers/promises';
import {
  isStoreUnavailable,
  isWebhookNotStoredYet,
  parseChange,
  RecordStreams,
  rejectedStreamKey,
  RejectedChanges,
} from '@pw/records';
import type { PartitionEntry, RecordChange, RefusedChange } from '@pw/records';
import { ingressTotals, keptMinutes, markChanged, takeChangedMinutes } from '@pw/shared/records';
import type { Partitions } from '@pw/shared/queue';
import type { IngressCountRow } from '@pw/shared/records';
import type { Logger, RedisClient } from '@pw/shared/runtime';
import { HotRecords } from './hot-records.js';
import { WebhookWaits } from './webhook-waits.js';
import type { RecorderMetrics } from './metrics.js';

/** What the recorder needs of the record store. */
export interface RecordWriter {
  /** Returns the webhooks now finished for good whose hot records can go (`RecordStore.writeBatch`). */
  writeBatch(changes: RecordChange[]): Promise<string[]>;
  writeIngressCounts(rows: IngressCountRow[]): Promise<void>;
  purge(options: { retentionDays: number }): Promise<unknown>;
  ping(): Promise<void>;
}

export interface RecorderSettings {
  /** The queue partitions: a record stream each; set-aside changes under the shared prefix. */
  partitions: Partitions;
  /** This process's name in the consumer group. */
  consumer: string;
  retentionDays: number;
  /** `RECORD_TTL_SECONDS`: how long a finished webhook's hot record stays once stored (`HotRecords`). */
  recordTtlSeconds: number;
  /** Most changes per batch. @defaultValue 500 */
  batchSize?: number;
  /** After a batch shorter than `batchSize`, a pause for changes to gather (ms). @defaultValue 100 */
  gatherMs?: number;
  /**
   * How long a read waits for new changes (ms); with several partitions, the pause before the
   * streams are read again when none had any. @defaultValue 1000
   */
  blockMs?: number;
  /** A change another recorder took and has not written for this long is taken over (ms). @defaultValue 30000 */
  claimIdleMs?: number;
  /** Between purges of rows older than the retention (ms). @defaultValue 1 hour */
  purgeEveryMs?: number;
  /**
   * How long a change may wait, pending, for its webhook's own change (ms), before it is set
   * aside with the refused. @defaultValue `WEBHOOK_WAIT_MS` (10 minutes)
   */
  webhookWaitMs?: number;
}

/** Longest wait between tries while the record store is away (ms). */
const MAX_BACKOFF_MS = 5000;

/**
 * How long a change may wait for its webhook's own change (ms), by default, from when this
 * recorder first found the webhook missing: one of a webhook the store has not, because another
 * recorder holds the webhook's change (or held it, and died: it is taken over after
 * `claimIdleMs`), stays pending and is read again once taken over anew (`WebhookWaits`); past
 * this, it is set aside with the refused.
 */
export const WEBHOOK_WAIT_MS = 600_000;

/**
 * Writes the record streams to the record store: reads every partition's stream in a consumer
 * group (`RecordStreams`), writes each batch in one transaction and only then acknowledges and
 * deletes its changes, so a change is in Redis or in the store, never neither. While the store is
 * away (`isStoreUnavailable`: no connection, out of disk, ...) the batch stays pending and is tried
 * again (backoff up to 5 s); writing it twice changes nothing. A batch the store refuses is written
 * again apart (`writeApart`): a change refused only because its webhook's row is not there yet
 * stays pending, waiting for the webhook's own change (`WebhookWaits`); one it refuses alone is set
 * aside on the shared prefix's `<prefix>:records:rejected` (`RejectedChanges`), counted and
 * logged, so one bad change never stops the others. Also copies the ingress's per-minute counts (summed over the partitions) and
 * purges rows past `RECORD_RETENTION_DAYS`.
 */
export class Recorder {
  private stopped = false;
  private running: Promise<void> | undefined;
  private readonly streams: RecordStreams;
  private readonly rejected: RejectedChanges;
  private readonly hot: HotRecords;
  private failures = 0;
  private lastClaim = 0;
  private lastPurge = 0;
  private readonly waits: WebhookWaits;

  constructor(
    private readonly redis: RedisClient,
    private readonly store: RecordWriter,
    private readonly settings: RecorderSettings,
    private readonly log: Logger,
    private readonly metrics?: RecorderMetrics,
  ) {
    this.streams = new RecordStreams(redis, settings.partitions, {
      consumer: settings.consumer,
      batchSize: settings.batchSize ?? 500,
      blockMs: settings.blockMs ?? 1000,
    });
    this.rejected = new RejectedChanges(redis, settings.partitions);
    this.hot = new HotRecords(redis, settings.partitions, settings.recordTtlSeconds);
    this.waits = new WebhookWaits(settings.webhookWaitMs ?? WEBHOOK_WAIT_MS);
    // Read from Redis at each scrape: true while the store is down, when no batch gets written.
    metrics?.observe({
      backlog: () => this.streams.backlog(),
      setAside: () => this.rejected.count(),
    });
  }

  async start(): Promise<void> {
    await this.streams.createGroups();
    // Every minute of ingress counts still in Redis is copied again at start (running totals, so
    // harmless): a recorder that died between taking minutes off a changed set and writing them
    // loses none.
    await markChanged(
      this.redis,
      this.settings.partitions,
      await keptMinutes(this.redis, this.settings.partitions),
    );
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.housekeeping();
        const entries = await this.streams.read();
        if (entries.length > 0) await this.write(entries);
        this.healthy();
        // A short batch: let changes gather a moment, so a steady trickle is written in fewer,
        // larger transactions (a change waits at most this long more).
        if (entries.length > 0 && !this.streams.full) {
          await sleep(this.settings.gatherMs ?? 100);
        }
      } catch (error) {
        // After a failure, what this recorder holds is read again first.
        this.streams.failed();
        // The group gone (Redis restarted without its data, the stream deleted): made again.
        if (String(error).includes('NOGROUP')) {
          await this.streams.createGroups().catch(() => undefined);
        }
        await this.failed(error);
      }
    }
  }

  private async write(entries: PartitionEntry[]): Promise<void> {
    const { changes, refused } = parseAll(entries);
    const all = changes.flatMap(({ changes: parsed }) => parsed);
    let written: Written;
    try {
      written = { finished: await this.store.writeBatch(all), refused, waiting: [] };
    } catch (error) {
      // The store away: the batch waits, pending. Else it refused something in it: find what.
      if (isStoreUnavailable(error)) throw error;
      if (!isWebhookNotStoredYet(error)) {
        this.log.warn(
          { err: error, changes: changes.length },
          'the record store refused a batch: writing its changes one by one',
        );
      }
      written = await this.writeApart(changes);
      written.refused.push(...refused);
    }
    if (written.refused.length > 0) await this.setAside(written.refused);
    // Before the changes leave the stream: a recorder stopped in between writes them again.
    await this.hot.shorten(written.finished);
    const waiting = new Set(written.waiting);
    const done = entries.filter((e) => !waiting.has(entryKey(e)));
    await this.streams.done(done.map(({ partition, entry }) => ({ partition, id: entry[0] })));
    for (const entry of done) this.waits.ended(entryKey(entry));
    this.waits.written(
      changes.flatMap((e) => (waiting.has(entryKey(e)) ? [] : openedWebhooks(e.changes))),
    );
    this.metrics?.written.inc(done.length - written.refused.length);
    this.metrics?.batches.inc({ outcome: 'written' });
  }

  /**
   * A batch the store refused, apart: the entries that may lack their webhook's row (a completion
   * whose webhook no change of the batch opens) one by one, the others together when they can be,
   * so that a completion waiting among hundreds of changes costs one transaction more, not
   * hundreds.
   */
  private async writeApart(changes: ParsedEntry[]): Promise<Written> {
    const opened = new Set(changes.flatMap((e) => openedWebhooks(e.changes)));
    const lacking = (e: ParsedEntry) =>
      e.changes.some((change) => change.kind === 'completed' && !opened.has(change.webhook_id));
    const alone = changes.filter(lacking);
    const together = changes.filter((e) => !lacking(e));
    if (alone.length > 0 && together.length > 0) {
      try {
        const finished = await this.store.writeBatch(together.flatMap((e) => e.changes));
        const rest = await this.writeOneByOne(alone);
        return { ...rest, finished: [...finished, ...rest.finished] };
      } catch (error) {
        if (isStoreUnavailable(error)) throw error;
      }
    }
    return this.writeOneByOne(changes);
  }

  /**
   * Each entry's changes on their own; returns the entries the store refused alone, those that
   * wait for their webhook's own change (left pending), and the webhooks the others finished.
   */
  private async writeOneByOne(changes: ParsedEntry[]): Promise<Written> {
    const written: Written = { refused: [], waiting: [], finished: [] };
    for (const parsed of changes) {
      const { partition, entry } = parsed;
      try {
        written.finished.push(...(await this.store.writeBatch(parsed.changes)));
      } catch (error) {
        // The store went away meanwhile: the whole batch waits (what was written is written
        // again later, which changes nothing).
        if (isStoreUnavailable(error)) throw error;
        const webhooks = parsed.changes.map(webhookOfChange).filter(Boolean);
        if (isWebhookNotStoredYet(error) && this.waits.mayWait(entryKey(parsed), webhooks)) {
          this.log.info(
            { change_id: entry[0], partition },
            "record change waits for its webhook's own change",
          );
          written.waiting.push(entryKey(parsed));
          continue;
        }
        written.refused.push({ id: entry[0], fields: entry[1] ?? [], error, partition });
        this.waits.setAsideOf(webhooks);
      }
    }
    return written;
  }

  /** Kept apart, with the store's reasons, before they are deleted from the stream. */
  private async setAside(refused: RefusedChange[]): Promise<void> {
    await this.rejected.setAside(refused);
    this.metrics?.rejected.inc(refused.length);
    const stream = rejectedStreamKey(this.settings.partitions.shared);
    for (const { id, error, partition } of refused) {
      this.log.error(
        { err: error, change_id: id, partition, stream },
        'record change refused by the store: set aside on the rejected stream',
      );
    }
  }

  /**
   * Now and then: changes of a recorder that died (then read first), the ingress counts, the
   * retention.
   */
  private async housekeeping(): Promise<void> {
    const now = Date.now();
    if (now - this.lastClaim >= (this.settings.claimIdleMs ?? 30_000)) {
      this.lastClaim = now;
      await this.streams.claim(this.settings.claimIdleMs ?? 30_000);
    }
    await this.copyCounts();
    if (now - this.lastPurge >= (this.settings.purgeEveryMs ?? 3_600_000)) {
      this.lastPurge = now;
      const removed = await this.store.purge({ retentionDays: this.settings.retentionDays });
      const level = Object.values(removed as Record<string, number>).some(Boolean)
        ? 'info'
        : 'debug';
      this.log[level]({ removed, retention_days: this.settings.retentionDays }, 'retention purge');
    }
  }

  /**
   * The minutes whose ingress counts changed in any partition, copied as running totals summed
   * over every partition (so copying one twice is harmless); a minute is taken off its changed
   * set before it is read, so a count that comes in meanwhile marks it again, and put back when
   * the store did not take it.
   */
  private async copyCounts(): Promise<void> {
    const { partitions } = this.settings;
    const taken = await takeChangedMinutes(this.redis, partitions);
    if (taken.size === 0) return;
    try {
      const rows = await ingressTotals(this.redis, partitions, [...taken.values()].flat());
      await this.store.writeIngressCounts(rows);
    } catch (error) {
      await markChanged(this.redis, partitions, taken);
      throw error;
    }
  }

  private healthy(): void {
    this.failures = 0;
    this.metrics?.storeUp.set(1);
  }

  private async failed(error: unknown): Promise<void> {
    this.failures += 1;
    this.metrics?.storeUp.set(0);
    this.metrics?.batches.inc({ outcome: 'failed' });
    const waitMs = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(this.failures, 10));
    // One line when the trouble starts, then one every ten tries.
    if (this.failures === 1 || this.failures % 10 === 0) {
      this.log.warn(
        { err: error, failures: this.failures, retry_ms: waitMs },
        'record store write failed: changes wait in Redis',
      );
    }
    if (!this.stopped) await sleep(waitMs);
  }
}

/** An entry of a partition's stream and the changes it stands for. */
interface ParsedEntry extends PartitionEntry {
  changes: RecordChange[];
}

/** What a batch came to: changes set aside, those left waiting (`entryKey`), webhooks finished. */
interface Written {
  refused: RefusedChange[];
  waiting: string[];
  finished: string[];
}

/** An entry's key among every partition's: ids are unique within one stream only. */
const entryKey = ({ partition, entry }: PartitionEntry): string => `${partition}:${entry[0]}`;

/** The webhooks whose row a change opens: a `webhook` or an `outcome` change's. */
const openedWebhooks = (changes: readonly RecordChange[]): string[] =>
  changes.flatMap((change) =>
    change.kind === 'webhook' || change.kind === 'outcome' ? [webhookOfChange(change)] : [],
  );

/** The webhook a change is about ('' for an audit entry). */
function webhookOfChange(change: RecordChange): string {
  switch (change.kind) {
    case 'webhook':
      return change.webhook.webhook_id;
    case 'outcome':
      return change.outcome.webhook_id;
    case 'completed':
      return change.webhook_id;
    default:
      return '';
  }
}

/** Every entry's changes; an entry that cannot be read at all is refused with the reason. */
function parseAll(entries: PartitionEntry[]) {
  const changes: ParsedEntry[] = [];
  const refused: RefusedChange[] = [];
  for (const { partition, entry } of entries) {
    try {
      changes.push({ partition, entry, changes: parseChange(entry) });
    } catch (error) {
      refused.push({ id: entry[0], fields: entry[1] ?? [], error, partition });
    }
  }
  return { changes, refused };
}
