import { setTimeout as sleep } from 'node:timers/promises';
import type { Partitions } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import type { RedisClient } from '@pw/shared/runtime';
import { RECORDER_GROUP } from './changes.js';
import type { StreamEntry } from './parse-change.js';

/** An entry of partition `partition`'s record stream. */
export interface PartitionEntry {
  partition: number;
  entry: StreamEntry;
}

export interface RecordStreamOptions {
  /** This process's name in the consumer groups. */
  consumer: string;
  /** Most changes a read takes, over every stream. */
  batchSize: number;
  /** How long a read waits for new changes (ms). */
  blockMs: number;
}

/** Most XAUTOCLAIM calls one take-over makes of one stream (each up to `batchSize` changes). */
const MAX_CLAIM_ROUNDS = 20;

/** Fewest changes a read takes of one stream, however many partitions share `batchSize`. */
const MIN_SHARE = 10;

interface Stream {
  partition: number;
  key: string;
  /** Changes this consumer took and has not acknowledged may be waiting: read those first. */
  ownPending: boolean;
  /**
   * Where the next read of those starts: after the last one read, so that a change left pending
   * on purpose (`Recorder`: its webhook not stored yet) is read again only once taken over anew.
   */
  pendingFrom: string;
}

/**
 * Every partition's record stream (`recordStreamKey(partitions.prefix(i))`), read in one consumer
 * group each. Each command names one stream, so that on a Redis Cluster it goes to the master of
 * that partition. With one partition a read blocks on its stream, as a recorder always did; with
 * several, each stream is read without blocking (a blocking read holds its connection) and, when
 * none had anything, the next read comes `blockMs` later.
 */
export class RecordStreams {
  private readonly streams: Stream[];
  /** Most changes a read takes of one stream. */
  private readonly share: number;
  /** The last read took a full share of some stream: more is waiting. */
  full = false;

  constructor(
    private readonly redis: RedisClient,
    partitions: Partitions,
    private readonly options: RecordStreamOptions,
  ) {
    this.streams = partitions.prefixes.map((prefix, partition) => ({
      partition,
      key: recordStreamKey(prefix),
      ownPending: true,
      pendingFrom: '0',
    }));
    this.share = Math.max(MIN_SHARE, Math.ceil(options.batchSize / partitions.count));
  }

  /** The consumer groups, from each stream's start; there already, fine. */
  async createGroups(): Promise<void> {
    await Promise.all(
      this.streams.map((stream) =>
        this.redis
          .xgroup('CREATE', stream.key, RECORDER_GROUP, '0', 'MKSTREAM')
          .catch((error: unknown) => {
            if (!String(error).includes('BUSYGROUP')) throw error;
          }),
      ),
    );
  }

  /** The next changes: of each stream, those this consumer holds first, then new ones. */
  async read(): Promise<PartitionEntry[]> {
    const [single] = this.streams;
    const block = this.streams.length === 1 && single !== undefined && !single.ownPending;
    const reads = await Promise.all(this.streams.map((stream) => this.readOne(stream, block)));
    this.full = reads.some((entries) => entries.length >= this.share);
    const found = reads.flatMap((entries, i) =>
      entries.map((entry) => ({ partition: this.streams[i]?.partition ?? 0, entry })),
    );
    if (found.length === 0 && !block && !this.streams.some((stream) => stream.ownPending)) {
      await sleep(this.options.blockMs);
    }
    return found;
  }

  private async readOne(stream: Stream, block: boolean): Promise<StreamEntry[]> {
    const from = stream.ownPending ? stream.pendingFrom : '>';
    const wait = block ? ['BLOCK', this.options.blockMs] : [];
    const reply = (await this.redis.xreadgroup(
      'GROUP',
      RECORDER_GROUP,
      this.options.consumer,
      'COUNT',
      this.share,
      ...(wait as ['BLOCK', number]),
      'STREAMS',
      stream.key,
      from,
    )) as [string, StreamEntry[]][] | null;
    const entries = reply?.[0]?.[1] ?? [];
    // Once nothing of ours is pending past the cursor, new changes.
    if (entries.length === 0) this.pendingRead(stream);
    else if (stream.ownPending) stream.pendingFrom = entries.at(-1)![0];
    return entries;
  }

  /** A write failed: what each stream gave this consumer is read again first. */
  failed(): void {
    for (const stream of this.streams) this.pendingRead(stream, true);
  }

  /** Whether the stream's next read is of this consumer's pending changes, from the first. */
  private pendingRead(stream: Stream, pending = false): void {
    stream.ownPending = pending;
    stream.pendingFrom = '0';
  }

  /** Acknowledged and deleted together, stream by stream: each holds only what the store lacks. */
  async done(entries: readonly { partition: number; id: string }[]): Promise<void> {
    await Promise.all(
      this.streams.map(async (stream) => {
        const ids = entries.filter((e) => e.partition === stream.partition).map((e) => e.id);
        if (ids.length === 0) return;
        await this.redis
          .multi()
          .xack(stream.key, RECORDER_GROUP, ...ids)
          .xdel(stream.key, ...ids)
          .exec();
      }),
    );
  }

  /**
   * Takes over changes another consumer took and left for `idleMs` (this one's too: those it left
   * pending on purpose), read first after; true when there were some.
   */
  async claim(idleMs: number): Promise<boolean> {
    const claimed = await Promise.all(
      this.streams.map(async (stream) => {
        // Every idle one, a batch at a time from where the last left off: changes left waiting
        // on purpose, however many, do not keep a dead recorder's later ones from being taken.
        let taken = 0;
        let from = '0-0';
        for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
          const [next, ids] = (await this.redis.xautoclaim(
            stream.key,
            RECORDER_GROUP,
            this.options.consumer,
            idleMs,
            from,
            'COUNT',
            this.options.batchSize,
            'JUSTID',
          )) as [string, string[]];
          taken += ids.length;
          if (next === '0-0') break;
          from = next;
        }
        if (taken > 0) this.pendingRead(stream, true);
        return taken > 0;
      }),
    );
    return claimed.some(Boolean);
  }

  /** Changes waiting on every stream. */
  async backlog(): Promise<number> {
    const lengths = await Promise.all(this.streams.map((stream) => this.redis.xlen(stream.key)));
    return lengths.reduce((sum, length) => sum + length, 0);
  }
}
