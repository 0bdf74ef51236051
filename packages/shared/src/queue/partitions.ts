// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- cluster-key-slot ships no types: its declaration must come with this file to every package that compiles it
/// <reference path="../types/cluster-key-slot.d.ts" />
import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';

/** Redis Cluster's number of hash slots. */
export const CLUSTER_SLOTS = 16_384;

/** The most partitions `QUEUE_PARTITIONS` allows. */
export const MAX_QUEUE_PARTITIONS = 1024;

/** Random bytes in a webhook id (`wh_` + 22 base64url characters). */
const ID_BYTES = 16;

/**
 * The hash tag of partition `index` of `count`, derived from the queue prefix: `{pw:3}`, or
 * `{pw:3:k}` with the first `k` that puts it in the `index`-th `count`-th of the slot space. A
 * cluster whose masters hold equal runs of slots (as `redis-cli --cluster create` makes them) so
 * carries `count / masters` partitions on each master.
 */
export function partitionTag(queuePrefix: string, index: number, count: number): string {
  const base = queuePrefix.replaceAll(/[{}]/g, '');
  const low = Math.ceil((index * CLUSTER_SLOTS) / count);
  const high = Math.ceil(((index + 1) * CLUSTER_SLOTS) / count);
  for (let k = 0; ; k++) {
    const tag = k === 0 ? `${base}:${index}` : `${base}:${index}:${k}`;
    const slot = calculateSlot(tag);
    if (slot >= low && slot < high) return `{${tag}}`;
  }
}

/**
 * The queue partitions (`QUEUE_PARTITIONS`, docs/operations.md → Partitions): each a set of
 * queues and keys under a prefix of its own, a hash tag in a Redis Cluster. A webhook belongs to
 * the partition of its entity id, and its id says which (`ofWebhookId`), so any process finds its
 * keys from the id alone. With one partition, its prefix is the queue prefix itself: the layout of
 * a system that had no partitions.
 *
 * `shared` prefixes what is not partitioned and not written per webhook or per action: circuits,
 * routing rules, per-action limits, logins, the stored partition count.
 */
export class Partitions {
  readonly prefixes: readonly string[];
  private mapKey: KeyObject | undefined;
  private secret: string | undefined;

  constructor(
    /** `QUEUE_PREFIX`. */
    readonly shared: string,
    readonly count = 1,
  ) {
    if (!Number.isInteger(count) || count < 1 || count > MAX_QUEUE_PARTITIONS) {
      throw new RangeError(`partition count must be 1 to ${MAX_QUEUE_PARTITIONS}, not ${count}`);
    }
    this.prefixes =
      count === 1
        ? [shared]
        : Array.from({ length: count }, (_, index) => partitionTag(shared, index, count));
  }

  /** Every partition's index. */
  all(): number[] {
    return this.prefixes.map((_, index) => index);
  }

  /** The key prefix (BullMQ's queue prefix) of partition `index`. */
  prefix(index: number): string {
    const prefix = this.prefixes[index];
    if (prefix === undefined) throw new RangeError(`no partition ${index} of ${this.count}`);
    return prefix;
  }

  /**
   * Keys the entity-to-partition map with the secret Redis keeps beside the partition count
   * (`claimPartitionCount` does it), so that a sender cannot choose ids that collide.
   */
  keyMap(secret: string): void {
    this.secret = secret;
    this.mapKey = createSecretKey(Buffer.from(secret, 'base64url'));
  }

  /** The secret the map is keyed by (`keyMap`); undefined before. */
  get mapSecret(): string | undefined {
    return this.secret;
  }

  /** True once `ofEntity` can answer: the map is keyed, or there is one partition. */
  get mapped(): boolean {
    return this.count === 1 || this.mapKey !== undefined;
  }

  /**
   * The partition of an entity id (the dedup identity when the event has none): stable, and
   * keyed by a secret (`keyMap`), so ids chosen to collide spread like any others.
   */
  ofEntity(key: string): number {
    if (this.count === 1) return 0;
    if (!this.mapKey)
      throw new Error('the partition map is keyed once the partition count is claimed');
    return createHmac('sha256', this.mapKey).update(key).digest().readUInt32BE(0) % this.count;
  }

  /** The partition a webhook id was made for (`newWebhookId`); 0 with one partition. */
  ofWebhookId(webhookId: string): number {
    if (this.count === 1) return 0;
    const bytes = Buffer.from(webhookId.slice(3), 'base64url');
    return bytes.length < 2 ? 0 : bytes.readUInt16BE(bytes.length - 2) % this.count;
  }

  /** The key prefix of the partition `webhookId` belongs to. */
  prefixOfWebhook(webhookId: string): string {
    return this.prefix(this.ofWebhookId(webhookId));
  }

  /**
   * An unguessable webhook id of partition `index`: `wh_` and 128 bits in base64url, random but
   * for the last 16 bits' remainder modulo the partition count (at most 10 bits with 1,024
   * partitions), which names the partition.
   */
  newWebhookId(index: number): string {
    const bytes = nextIdBytes();
    if (this.count > 1) {
      const random = bytes.readUInt16BE(ID_BYTES - 2);
      let value = random - (random % this.count) + index;
      if (value > 0xffff) value -= this.count;
      bytes.writeUInt16BE(value, ID_BYTES - 2);
    }
    return `wh_${bytes.toString('base64url')}`;
  }

  /**
   * The partitions a `WORKER_PARTITIONS` value names (`0-3,7`; unset: all), or the problem with
   * it in one line.
   */
  select(spec: string | undefined): number[] | string {
    if (spec === undefined || spec.trim() === '') return this.all();
    const chosen = new Set<number>();
    for (const part of spec.split(',')) {
      const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
      if (!match) return `"${part.trim()}" is not a partition or a range (0-3,7)`;
      const from = Number(match[1]);
      const to = match[2] === undefined ? from : Number(match[2]);
      if (to < from) return `"${part.trim()}" runs backwards`;
      if (to >= this.count)
        return `${to} is not a partition: QUEUE_PARTITIONS is ${this.count} (0-${this.count - 1})`;
      for (let index = from; index <= to; index++) chosen.add(index);
    }
    return [...chosen].sort((a, b) => a - b);
  }
}

let idPool = Buffer.alloc(0);
let idOffset = 0;

/**
 * 16 random bytes, cut from a pool filled 4 KB at a time (one call to the system's random source
 * for 256 ids instead of one each); a copy, so the caller may change it.
 */
function nextIdBytes(): Buffer {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 256);
    idOffset = 0;
  }
  const bytes = Buffer.from(idPool.subarray(idOffset, idOffset + ID_BYTES));
  idOffset += ID_BYTES;
  return bytes;
}

/** An unguessable webhook id of a system with one partition (`Partitions.newWebhookId`). */
export const newWebhookId = (): string => SINGLE.newWebhookId(0);

const SINGLE = new Partitions('pw', 1);
