import { boundedError } from '@pw/shared/outcomes';
import { keys, Partitions } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import type { RedisClient } from '@pw/shared/runtime';

/**
 * Record changes the record store refused on their own (a value it cannot hold, a row over one of
 * its limits), set aside by the recorder so that the stream behind them keeps moving. Each entry
 * of `<prefix>:records:rejected` holds the change's own fields (`k`, `d`, `a`) as they were on the
 * record stream, its id there (`id`: its place in the order of changes), and the store's refusal
 * (`error_code`, its SQLSTATE when it had one, and `error`). Nothing trims the stream: a change
 * stays until an operator re-drives it (after a fix) or discards it.
 */
export const rejectedStreamKey = (prefix: string): string => keys.rejected(prefix);

/** A change's field on the record stream naming the id it first had (a re-driven change). */
export const ORIGIN_FIELD = 'o';

/** The fields of a change on the record stream, in the order they were written. */
const CHANGE_FIELDS = ['k', 'd', 'a', ORIGIN_FIELD] as const;

/** A refused change as the recorder hands it over. */
export interface RefusedChange {
  /** Its id on the record stream. */
  id: string;
  /** Its fields there, flat (`[name, value, ...]`); empty for an entry deleted by hand. */
  fields: readonly string[];
  error: unknown;
  /** The partition whose record stream it was on. @defaultValue 0 */
  partition?: number;
}

/** A set-aside change's field naming the partition whose record stream it came from. */
const PARTITION_FIELD = 'p';

/** One set-aside change, as the operator API lists it. */
export interface RejectedChange {
  /** Its id on the rejected stream: what a re-drive or a discard names. */
  id: string;
  /** Its first id on the record stream, which orders it among the webhook's other changes. */
  change_id: string;
  rejected_at: string;
  /** `webhook`, `outcome` or `audit`; null when the entry could not be read. */
  kind: string | null;
  /** The webhook it belongs to (an audit entry's target); null when unknown. */
  webhook_id: string | null;
  error: { code: string | null; message: string };
  /** The change's data as written (`d`), parsed; the raw text when it is not JSON. */
  data: unknown;
}

export interface RejectedPage {
  rejected: RejectedChange[];
  next_cursor: string | null;
}

/** A stream id: the only cursor and the only names these operations take. */
const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

export const isStreamId = (value: string): boolean => STREAM_ID.test(value);

/**
 * The set-aside changes: kept by the recorder, listed, re-driven and discarded by operators. One
 * stream under the shared prefix for every partition; each change goes back to the record stream
 * of the partition it came from.
 */
export class RejectedChanges {
  private readonly key: string;
  private readonly partitions: Partitions;

  constructor(
    private readonly redis: RedisClient,
    /** The queue partitions, or a queue prefix (one partition). */
    partitions: Partitions | string,
  ) {
    this.partitions = typeof partitions === 'string' ? new Partitions(partitions) : partitions;
    this.key = rejectedStreamKey(this.partitions.shared);
  }

  /** Sets the changes aside with the store's reasons; all are kept, or the call throws. */
  async setAside(changes: readonly RefusedChange[]): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const { id, fields, error, partition } of changes) {
      const code = (error as { code?: unknown } | null)?.code;
      pipeline.xadd(
        this.key,
        '*',
        ...(partition ? [PARTITION_FIELD, String(partition)] : []),
        'id',
        originOf(id, fields),
        'error_code',
        typeof code === 'string' ? code : '',
        'error',
        boundedError(error instanceof Error ? error.message : String(error)),
        ...changeFields(fields),
      );
    }
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }

  /** How many changes are set aside. */
  count(): Promise<number> {
    return this.redis.xlen(this.key);
  }

  /** A page of them, newest first; `cursor` is the last id of the page before. */
  async list(options: { limit: number; cursor?: string }): Promise<RejectedPage> {
    const end = options.cursor ? `(${options.cursor}` : '+';
    const entries = (await this.redis.xrevrange(
      this.key,
      end,
      '-',
      'COUNT',
      options.limit + 1,
    )) as [string, string[]][];
    const page = entries
      .slice(0, options.limit)
      .map(([id, fields]) => toRejectedChange(id, fields));
    return {
      rejected: page,
      next_cursor: entries.length > options.limit ? (page.at(-1)?.id ?? null) : null,
    };
  }

  /**
   * Puts set-aside changes back on the record stream (the named ones, or every one set aside when
   * the call began), each keeping its first id so that the store orders it where it was; returns
   * the ids re-driven. Each moves in one transaction: it is on one stream or the other, never both
   * or neither. One the store refuses again is set aside anew, under a new id.
   */
  async redrive(ids?: readonly string[]): Promise<string[]> {
    const moved: string[] = [];
    for await (const batch of ids ? [await this.named(ids)] : this.everyOne()) {
      for (const [id, fields] of batch) {
        await this.moveBack(id, fields);
        moved.push(id);
      }
    }
    return moved;
  }

  /**
   * One change back on its partition's record stream. With one partition, in one transaction; a
   * partition's stream lies in another hash slot than the shared prefix (a transaction cannot span
   * them in a Redis Cluster), so the change is added there first and deleted here after: a crash
   * between leaves it on both, and writing it twice changes no record.
   */
  private async moveBack(id: string, fields: string[]): Promise<void> {
    const named = new Map(pairs(fields));
    const origin = named.get('id') ?? id;
    const partition = Number(named.get(PARTITION_FIELD) ?? 0);
    const prefix = this.partitions.prefix(partition < this.partitions.count ? partition : 0);
    const change = [...withoutOrigin(changeFields(fields)), ORIGIN_FIELD, origin];
    if (prefix === this.partitions.shared) {
      await this.redis
        .multi()
        .xadd(recordStreamKey(prefix), '*', ...change)
        .xdel(this.key, id)
        .exec();
      return;
    }
    await this.redis.xadd(recordStreamKey(prefix), '*', ...change);
    await this.redis.xdel(this.key, id);
  }

  /** Drops the named set-aside changes for good; returns the ids that were there. */
  async discard(ids: readonly string[]): Promise<string[]> {
    const found = (await this.named(ids)).map(([id]) => id);
    if (found.length > 0) await this.redis.xdel(this.key, ...found);
    return found;
  }

  /** The named entries that exist. */
  private async named(ids: readonly string[]): Promise<[string, string[]][]> {
    const found: [string, string[]][] = [];
    for (const id of ids) {
      const [entry] = (await this.redis.xrange(this.key, id, id)) as [string, string[]][];
      if (entry) found.push(entry);
    }
    return found;
  }

  /** Every entry there when the walk began, oldest first, a hundred at a time. */
  private async *everyOne(): AsyncGenerator<[string, string[]][]> {
    const [last] = await this.redis.xrevrange(this.key, '+', '-', 'COUNT', 1);
    if (!last) return;
    let start = '-';
    for (;;) {
      const batch = (await this.redis.xrange(this.key, start, last[0], 'COUNT', 100)) as [
        string,
        string[],
      ][];
      if (batch.length === 0) return;
      yield batch;
      start = `(${batch.at(-1)?.[0] ?? last[0]}`;
    }
  }
}

/** The flat fields as [name, value] pairs. */
function pairs(fields: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) out.push([fields[i] ?? '', fields[i + 1] ?? '']);
  return out;
}

/** Only the change's own fields (`k`, `d`, `a`, `o`), flat. */
function changeFields(fields: readonly string[]): string[] {
  return pairs(fields)
    .filter(([name]) => (CHANGE_FIELDS as readonly string[]).includes(name))
    .flat();
}

/** The change's fields without its origin (a re-drive writes the origin once, at the end). */
function withoutOrigin(flat: readonly string[]): string[] {
  return pairs(flat)
    .filter(([name]) => name !== ORIGIN_FIELD)
    .flat();
}

/** The id that orders a change: its origin when it was re-driven before, else its own. */
function originOf(id: string, fields: readonly string[]): string {
  return new Map(pairs(fields)).get(ORIGIN_FIELD) ?? id;
}

function toRejectedChange(id: string, fields: string[]): RejectedChange {
  const flat = new Map(pairs(fields));
  const text = flat.get('d');
  let data: unknown = text ?? null;
  try {
    if (text !== undefined) data = JSON.parse(text);
  } catch {
    // Kept as text: the reason it was refused may be that it is not JSON.
  }
  const member = (name: string) => {
    const value = (data as Record<string, unknown> | null)?.[name];
    return typeof value === 'string' ? value : null;
  };
  const kind = flat.get('k') ?? null;
  return {
    id,
    change_id: flat.get('id') ?? id,
    rejected_at: new Date(Number(id.split('-')[0])).toISOString(),
    kind,
    webhook_id: kind === 'audit' ? member('target') : member('webhook_id'),
    error: { code: flat.get('error_code') || null, message: flat.get('error') ?? '' },
    data,
  };
}
