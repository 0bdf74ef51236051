import { keys } from '../queue/queues.js';

// What a delivered event leaves for the deduplication window: one field in a hash of its
// partition (`keys.dedup`) for the hour of the event's own `timestamp` (which every redelivery
// repeats, so a repeat finds it in one read), named by the first 16 bytes of the SHA-256 of the
// event's canonical JSON, its value the first acknowledgement (`<webhook id> <acceptance time,
// ms in base 36> <actions>`, the actions `!` for a quarantined event), from which a repeat's answer is rebuilt exactly: about 140 bytes a
// webhook, where a key of its own and a field in a day's hash of acks took 300
// (docs/redis-cost.md). Redis 7.0 has no time to live per field, so an hour's hash expires whole.

/** The span of time whose events share a hash: an hour. */
export const DEDUP_BUCKET_MS = 3_600_000;

/** The bucket of the events whose `timestamp` cannot be read: kept the window after its last. */
export const UNTIMED_BUCKET = 'untimed';

/** Bytes of the digest that name an event in its bucket (128 bits: no collision to fear). */
const FIELD_BYTES = 16;

/** The bucket of an event dated `eventMs` (its `timestamp`; undefined: none that reads). */
export function dedupBucket(eventMs: number | undefined): string {
  if (eventMs === undefined) return UNTIMED_BUCKET;
  return new Date(eventMs - (eventMs % DEDUP_BUCKET_MS)).toISOString().slice(0, 13);
}

/**
 * Milliseconds, from `receivedMs`, to keep the bucket of an event dated `eventMs`: the
 * deduplication window (`dedupMs`, the skew and a minute included) after the later of the
 * bucket's end and now. Every event of the bucket can be accepted until its `timestamp` plus the
 * window, before the bucket's end plus the window; one taken in by a caller that skips the
 * freshness check (a test harness) is still remembered the window after it was taken in.
 */
export function dedupKeepMs(eventMs: number | undefined, receivedMs: number, dedupMs: number) {
  if (eventMs === undefined) return dedupMs;
  const end = eventMs - (eventMs % DEDUP_BUCKET_MS) + DEDUP_BUCKET_MS;
  return Math.max(end - receivedMs, 0) + dedupMs;
}

/** The field of an event in its bucket: the first 16 bytes of its digest (SHA-256, hex). */
export const dedupField = (digest: string): Buffer =>
  Buffer.from(digest.slice(0, FIELD_BYTES * 2), 'hex');

/** Where an event is remembered: its bucket's hash and its field. */
export interface DedupEntry {
  key: string;
  field: Buffer;
}

export const dedupEntry = (
  prefix: string,
  eventMs: number | undefined,
  digest: string,
): DedupEntry => ({
  key: keys.dedup(prefix, dedupBucket(eventMs)),
  field: dedupField(digest),
});

/**
 * The first acknowledgement, as the intake keeps it (`<id> <ms in base 36> <actions>`, the
 * actions `!` for a quarantined event, which has none).
 */
export interface KeptAck {
  webhook_id: string;
  received_at: string;
  actions: string[];
  quarantined?: boolean;
  /** A quarantined event an operator discarded: a repeat is told so. */
  discarded?: boolean;
}

/** The actions of a quarantined event's kept ack. */
const QUARANTINED = '!';
/** The actions of a discarded one's. */
const DISCARDED = '-';

const keptActions = (ack: KeptAck) =>
  ack.quarantined ? QUARANTINED : ack.discarded ? DISCARDED : ack.actions.join(',');

export const encodeAck = (ack: KeptAck): string =>
  `${ack.webhook_id} ${Date.parse(ack.received_at).toString(36)} ${keptActions(ack)}`;

/** The ack `encodeAck` kept (read from the right: an id may hold a space); null if none reads. */
export function decodeAck(value: string): KeptAck | null {
  const match = /^(.+) ([0-9a-z]+) ([^ ]*)$/.exec(value);
  if (!match) return null;
  const [, webhookId = '', time = '', actions = ''] = match;
  if (actions === QUARANTINED || actions === DISCARDED) {
    return {
      webhook_id: webhookId,
      received_at: new Date(parseInt(time, 36)).toISOString(),
      actions: [],
      ...(actions === QUARANTINED ? { quarantined: true } : { discarded: true }),
    };
  }
  return {
    webhook_id: webhookId,
    received_at: new Date(parseInt(time, 36)).toISOString(),
    actions: actions ? actions.split(',') : [],
  };
}

/** What reading kept acks needs of a Redis client (ioredis's, or the one BullMQ's queue holds). */
export interface HashReader {
  hget(key: string, field: string | Buffer): Promise<string | null>;
}

/** The ack kept for the event at `entry`; null when none is (or it is not `webhookId`'s). */
export async function findAck(
  redis: HashReader,
  entry: DedupEntry,
  webhookId: string,
): Promise<KeptAck | null> {
  const value = await redis.hget(entry.key, entry.field);
  const ack = value === null ? null : decodeAck(value);
  return ack?.webhook_id === webhookId ? ack : null;
}

/**
 * The previous version's ack of `webhookId`, looked for in the day hashes the window spans
 * (`keys.legacyAcks`, a field per webhook id, its value `<ms in base 36> <actions>`); null if
 * none holds it. Read for one deduplication window after an upgrade (docs/operations.md →
 * Upgrading), never written.
 */
export async function findLegacyAck(
  redis: HashReader,
  prefix: string,
  webhookId: string,
  dedupSeconds: number,
  now = Date.now(),
): Promise<KeptAck | null> {
  const days = Array.from({ length: Math.ceil(dedupSeconds / 86_400) + 2 }, (_, day) =>
    new Date(now - day * 86_400_000).toISOString().slice(0, 10),
  );
  const values = await Promise.all(
    days.map((day) => redis.hget(keys.legacyAcks(prefix, day), webhookId)),
  );
  const found = values.find((value) => typeof value === 'string');
  return found ? decodeAck(`${webhookId} ${found}`) : null;
}
