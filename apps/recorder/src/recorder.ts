import { setTimeout as sleep } from 'node:timers/promises';
import { isStoreUnavailable } from '@pw/records';
import { keys, RECORDER_GROUP, recordStreamKey, RejectedChanges } from '@pw/shared';
import type { Logger, RecordChange, RedisClient, RefusedChange } from '@pw/shared';
import type { RecorderMetrics } from './metrics.js';
import { parseChange } from './parse-change.js';
import type { StreamEntry } from './parse-change.js';

/** What the recorder needs of the record store. */
export interface RecordWriter {
  writeBatch(changes: RecordChange[]): Promise<void>;
  writeIngressCounts(rows: { minute: string; code: string; count: number }[]): Promise<void>;
  purge(options: { retentionDays: number }): Promise<unknown>;
  ping(): Promise<void>;
}

export interface RecorderSettings {
  queuePrefix: string;
  /** This process's name in the consumer group. */
  consumer: string;
  retentionDays: number;
  /** Most changes per batch. @defaultValue 500 */
  batchSize?: number;
  /** After a batch shorter than `batchSize`, a pause for changes to gather (ms). @defaultValue 100 */
  gatherMs?: number;
  /** How long a read waits for new changes (ms). @defaultValue 1000 */
  blockMs?: number;
  /** A change another recorder took and has not written for this long is taken over (ms). @defaultValue 30000 */
  claimIdleMs?: number;
  /** Between purges of rows older than the retention (ms). @defaultValue 1 hour */
  purgeEveryMs?: number;
}

/** Longest wait between tries while the record store is away (ms). */
const MAX_BACKOFF_MS = 5000;

/**
 * Writes the record stream to the record store: reads changes in a consumer group, writes each
 * batch in one transaction and only then acknowledges and deletes them, so a change is in Redis
 * or in the store, never neither. While the store is away (`isStoreUnavailable`: no connection,
 * out of disk, ...) the batch stays pending and is tried again (backoff up to 5 s); writing it
 * twice changes nothing. A batch the store refuses is written again change by change, and a change
 * it refuses alone is set aside on `<prefix>:records:rejected` (`RejectedChanges`), counted and
 * logged, so one bad change never stops the others. Also copies the ingress's per-minute counts
 * and purges rows past `RECORD_RETENTION_DAYS`.
 */
export class Recorder {
  private stopped = false;
  private running: Promise<void> | undefined;
  private readonly stream: string;
  private readonly rejected: RejectedChanges;
  private failures = 0;
  private lastClaim = 0;
  private lastPurge = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly store: RecordWriter,
    private readonly settings: RecorderSettings,
    private readonly log: Logger,
    private readonly metrics?: RecorderMetrics,
  ) {
    this.stream = recordStreamKey(settings.queuePrefix);
    this.rejected = new RejectedChanges(redis, settings.queuePrefix);
    // Read from Redis at each scrape: true while the store is down, when no batch gets written.
    metrics?.observe({
      backlog: () => this.redis.xlen(this.stream),
      setAside: () => this.rejected.count(),
    });
  }

  async start(): Promise<void> {
    await this.createGroup();
    await this.markKeptCounts();
    this.running = this.loop();
  }

  /** The consumer group, from the stream's start; there already, fine. */
  private async createGroup(): Promise<void> {
    await this.redis
      .xgroup('CREATE', this.stream, RECORDER_GROUP, '0', 'MKSTREAM')
      .catch((error: unknown) => {
        if (!String(error).includes('BUSYGROUP')) throw error;
      });
  }

  /**
   * Every minute of ingress counts still in Redis is copied again at start (running totals, so
   * harmless): a recorder that died between taking minutes off the changed set and writing them
   * loses none.
   */
  private async markKeptCounts(): Promise<void> {
    const { queuePrefix } = this.settings;
    const changedKey = keys.ingressCountsChanged(queuePrefix);
    const prefix = keys.ingressCounts(queuePrefix, '');
    let cursor = '0';
    do {
      const [next, found] = await this.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      const minutes = found.map((key) => key.slice(prefix.length)).filter((m) => m !== 'changed');
      if (minutes.length > 0) await this.redis.sadd(changedKey, ...minutes);
    } while (cursor !== '0');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    let ownPending = true;
    while (!this.stopped) {
      try {
        if (await this.housekeeping()) ownPending = true;
        const entries = await this.read(ownPending ? '0' : '>');
        // Once nothing of ours is pending, new changes; after a failure, ours again.
        ownPending = entries.length > 0 && ownPending;
        if (entries.length > 0) await this.write(entries);
        this.healthy();
        // A short batch: let changes gather a moment, so a steady trickle is written in fewer,
        // larger transactions (a change waits at most this long more).
        if (entries.length > 0 && entries.length < (this.settings.batchSize ?? 500)) {
          await sleep(this.settings.gatherMs ?? 100);
        }
      } catch (error) {
        ownPending = true;
        // The group gone (Redis restarted without its data, the stream deleted): made again.
        if (String(error).includes('NOGROUP')) await this.createGroup().catch(() => undefined);
        await this.failed(error);
      }
    }
  }

  private async read(from: '0' | '>'): Promise<StreamEntry[]> {
    const block = from === '>' ? ['BLOCK', this.settings.blockMs ?? 1000] : [];
    const reply = (await this.redis.xreadgroup(
      'GROUP',
      RECORDER_GROUP,
      this.settings.consumer,
      'COUNT',
      this.settings.batchSize ?? 500,
      ...(block as ['BLOCK', number]),
      'STREAMS',
      this.stream,
      from,
    )) as [string, StreamEntry[]][] | null;
    return reply?.[0]?.[1] ?? [];
  }

  private async write(entries: StreamEntry[]): Promise<void> {
    const { changes, refused } = parseAll(entries);
    try {
      await this.store.writeBatch(changes.flatMap(({ changes: parsed }) => parsed));
    } catch (error) {
      // The store away: the batch waits, pending. Else it refused something in it: find what.
      if (isStoreUnavailable(error)) throw error;
      this.log.warn(
        { err: error, changes: changes.length },
        'the record store refused a batch: writing its changes one by one',
      );
      refused.push(...(await this.writeOneByOne(changes)));
    }
    if (refused.length > 0) await this.setAside(refused);
    await this.done(entries.map(([id]) => id));
    this.metrics?.written.inc(entries.length - refused.length);
    this.metrics?.batches.inc({ outcome: 'written' });
  }

  /** Each entry's changes on their own; returns the entries the store refused alone. */
  private async writeOneByOne(changes: ParsedEntry[]): Promise<RefusedChange[]> {
    const refused: RefusedChange[] = [];
    for (const { entry, changes: parsed } of changes) {
      try {
        await this.store.writeBatch(parsed);
      } catch (error) {
        // The store went away meanwhile: the whole batch waits (what was written is written
        // again later, which changes nothing).
        if (isStoreUnavailable(error)) throw error;
        refused.push({ id: entry[0], fields: entry[1] ?? [], error });
      }
    }
    return refused;
  }

  /** Acknowledged and deleted together: the stream holds only what the store lacks. */
  private async done(ids: string[]): Promise<void> {
    await this.redis
      .multi()
      .xack(this.stream, RECORDER_GROUP, ...ids)
      .xdel(this.stream, ...ids)
      .exec();
  }

  /** Kept apart, with the store's reasons, before they are deleted from the stream. */
  private async setAside(refused: RefusedChange[]): Promise<void> {
    await this.rejected.setAside(refused);
    this.metrics?.rejected.inc(refused.length);
    for (const { id, error } of refused) {
      this.log.error(
        { err: error, change_id: id, stream: `${this.stream}:rejected` },
        'record change refused by the store: set aside on the rejected stream',
      );
    }
  }

  /**
   * Now and then: changes of a recorder that died (true when some were taken over), the ingress
   * counts, the retention.
   */
  private async housekeeping(): Promise<boolean> {
    const now = Date.now();
    let claimed = false;
    if (now - this.lastClaim >= (this.settings.claimIdleMs ?? 30_000)) {
      this.lastClaim = now;
      const [, ids] = (await this.redis.xautoclaim(
        this.stream,
        RECORDER_GROUP,
        this.settings.consumer,
        this.settings.claimIdleMs ?? 30_000,
        '0-0',
        'COUNT',
        this.settings.batchSize ?? 500,
        'JUSTID',
      )) as [string, string[]];
      claimed = ids.length > 0;
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
    return claimed;
  }

  /**
   * The minutes whose ingress counts changed, copied as running totals (so copying one twice is
   * harmless); a minute is taken off the changed set before it is read, so a count that comes in
   * meanwhile marks it again, and put back when the store did not take it.
   */
  private async copyCounts(): Promise<void> {
    const changedKey = keys.ingressCountsChanged(this.settings.queuePrefix);
    const minutes = await this.redis.smembers(changedKey);
    if (minutes.length === 0) return;
    await this.redis.srem(changedKey, ...minutes);
    try {
      const rows = [];
      for (const minute of minutes) {
        const counts = await this.redis.hgetall(
          keys.ingressCounts(this.settings.queuePrefix, minute),
        );
        for (const [code, count] of Object.entries(counts))
          rows.push({ minute, code, count: Number(count) });
      }
      await this.store.writeIngressCounts(rows);
    } catch (error) {
      await this.redis.sadd(changedKey, ...minutes);
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

/** An entry of the stream and the changes it stands for. */
interface ParsedEntry {
  entry: StreamEntry;
  changes: RecordChange[];
}

/** Every entry's changes; an entry that cannot be read at all is refused with the reason. */
function parseAll(entries: StreamEntry[]) {
  const changes: ParsedEntry[] = [];
  const refused: RefusedChange[] = [];
  for (const entry of entries) {
    try {
      changes.push({ entry, changes: parseChange(entry) });
    } catch (error) {
      refused.push({ id: entry[0], fields: entry[1] ?? [], error });
    }
  }
  return { changes, refused };
}
