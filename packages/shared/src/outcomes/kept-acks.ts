import { keys } from '../queue/queues.js';

/**
 * The first acknowledgement of each webhook, kept for repeats for the deduplication window after
 * its job has left Redis: one hash per UTC day of acceptance, a field per webhook (the id), its
 * value the acceptance time (ms, base 36) and the action names, about 130 bytes a webhook instead
 * of the job's kilobyte and a half.
 */
export const ackBucket = (receivedAt: string): string => receivedAt.slice(0, 10);

/** Seconds a day's hash is kept: the window, after the last webhook of that day. */
export const ackBucketSeconds = (dedupSeconds: number): number => dedupSeconds + 86_400;

export const encodeAck = (receivedAt: string, actions: readonly string[]): string =>
  `${Date.parse(receivedAt).toString(36)} ${actions.join(',')}`;

export function decodeAck(value: string): { received_at: string; actions: string[] } {
  const [time = '0', actions = ''] = value.split(' ');
  return {
    received_at: new Date(parseInt(time, 36)).toISOString(),
    actions: actions ? actions.split(',') : [],
  };
}

/**
 * The kept ack of `webhookId`, looked up in the day hashes the window spans (a repeat is rare;
 * the look-ups are sent together, so they take about one round trip); null when none holds it.
 */
/** What `findAck` needs of a Redis client (ioredis's, or the one BullMQ's queue holds). */
export interface HashReader {
  hget(key: string, field: string): Promise<string | null>;
}

export async function findAck(
  redis: HashReader,
  prefix: string,
  webhookId: string,
  dedupSeconds: number,
  now = Date.now(),
): Promise<{ received_at: string; actions: string[] } | null> {
  const days = Array.from({ length: Math.ceil(dedupSeconds / 86_400) + 2 }, (_, day) =>
    ackBucket(new Date(now - day * 86_400_000).toISOString()),
  );
  const values = await Promise.all(
    days.map((day) => redis.hget(keys.acks(prefix, day), webhookId)),
  );
  const found = values.find((value) => typeof value === 'string');
  return found ? decodeAck(found) : null;
}
