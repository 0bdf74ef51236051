import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ACTIONS_CONFIG } from '../src/actions/index.js';
import { sampleEvent } from '../src/events/index.js';
import { WebhookIntake } from '../src/intake/index.js';
import { OutcomeStore } from '../src/outcomes/index.js';
import { keys, QUEUE_NAMES, QUEUE_STREAMS } from '../src/queue/index.js';
import { canonicalJson } from '../src/signing/index.js';
import type { ActionName } from '../src/actions/index.js';
import type { ActionJobData, AcceptedWebhook } from '../src/queue/index.js';
import { useScriptRedis } from './script-redis.js';

// What a delivered event leaves for the deduplication window, through the intake the ingress
// runs (a real BullMQ queue on a real Redis): one field of the hour's hash, from which a repeat
// gets the first ack unchanged; and the previous version's keys, still honoured.

const r = useScriptRedis();
const WINDOW_S = 604_800;
const SKEW_S = 300;
/** What the intake keeps the event for: the window, the skew and a minute. */
const DEDUP_MS = (WINDOW_S + SKEW_S + 60) * 1000;
let queue: Queue<ActionJobData>;
let intake: WebhookIntake;

beforeEach(() => {
  queue = new Queue(QUEUE_NAMES.actions, {
    connection: r.redis,
    prefix: r.prefix,
    streams: QUEUE_STREAMS,
  });
  intake = new WebhookIntake(
    queue,
    new OutcomeStore(r.redis, { queuePrefix: r.prefix, recordTtlSeconds: 60 }),
    {
      queuePrefix: r.prefix,
      dedupWindowSeconds: WINDOW_S,
      maxClockSkewSeconds: SKEW_S,
      recordTtlSeconds: 60,
      actionsConfig: DEFAULT_ACTIONS_CONFIG,
      retry: { attempts: 3, backoff: { type: 'fixed', delay_ms: 1000 } },
    },
  );
});
afterEach(() => queue.close());

let next = 0;
/** A quote event dated `eventAt`, as the ingress would take it in at `receivedAt`. */
function webhook(event: Record<string, unknown>, receivedAt = new Date()): AcceptedWebhook {
  next += 1;
  return {
    webhook_id: `wh_test${next}`,
    event_type: event.event_type as AcceptedWebhook['event_type'],
    entity_id: String(event.quote_id),
    received_at: receivedAt.toISOString(),
    actions: ['notify_customer', 'update_sales_opportunity'] as ActionName[],
    event,
  };
}

const digestOf = (event: Record<string, unknown>) =>
  createHash('sha256').update(canonicalJson(event)).digest('hex');
const hourKey = (at: string) => keys.dedup(r.prefix, at.slice(0, 13));

describe('the acks kept for repeats', () => {
  it('a repeat gets the first ack unchanged and adds nothing; the event left one field in its hour', async () => {
    const event = sampleEvent('quote', { now: new Date('2026-11-26T10:42:00.000Z') });
    const first = await intake.accept(webhook(event, new Date('2026-11-26T10:42:01.000Z')));
    expect(first.duplicate).toBe(false);
    const jobs = await queue.getJobCountByTypes('wait');

    const repeat = await intake.accept(webhook(event, new Date('2026-11-26T11:30:00.000Z')));
    expect(repeat).toEqual({ ack: first.ack, duplicate: true });
    expect(await queue.getJobCountByTypes('wait')).toBe(jobs);

    // Its field: 16 bytes of its digest, in the hash of the hour of its timestamp, kept the
    // window after the hour's end: 17 min 59 s after it was taken in, then the window.
    const key = hourKey('2026-11-26T10');
    const field = Buffer.from(digestOf(event).slice(0, 32), 'hex');
    expect(await r.redis.hkeysBuffer(key)).toEqual([field]);
    expect(await r.redis.pttl(key)).toBeGreaterThan(DEDUP_MS + 17 * 60_000);
    expect(await r.redis.exists(keys.legacyDedup(r.prefix, digestOf(event)))).toBe(0);
  });

  it('events of one hour share its hash; an event of another hour, or without a time, has its own', async () => {
    const at = (time: string) => sampleEvent('quote', { now: new Date(time) });
    const untimed = { ...at('2026-11-26T10:00:00.000Z'), timestamp: 'not a time' };
    const events = [at('2026-11-26T10:00:00.000Z'), at('2026-11-26T10:59:59.999Z')];
    for (const event of [...events, at('2026-11-26T11:00:00.000Z'), untimed]) {
      expect((await intake.accept(webhook(event))).duplicate).toBe(false);
    }
    expect(await r.redis.hlen(hourKey('2026-11-26T10'))).toBe(2);
    expect(await r.redis.hlen(hourKey('2026-11-26T11'))).toBe(1);
    expect(await r.redis.hlen(keys.dedup(r.prefix, 'untimed'))).toBe(1);
    // The window from now, each event taken in now.
    expect(await r.redis.pttl(keys.dedup(r.prefix, 'untimed'))).toBeGreaterThan(DEDUP_MS - 5_000);
    expect((await intake.accept(webhook(untimed))).duplicate).toBe(true);
    expect((await intake.accept(webhook(events[1]!))).duplicate).toBe(true);
  });

  it('a repeat of an event the previous version took in gets its ack from the old keys, and adds nothing', async () => {
    const event = sampleEvent('quote', { now: new Date('2026-11-26T09:00:00.000Z') });
    // As the previous version left it: a key per event, and the ack in the day's hash.
    const receivedAt = '2026-11-25T23:59:58.123Z';
    await r.redis.set(keys.legacyDedup(r.prefix, digestOf(event)), 'wh_old', 'PX', DEDUP_MS);
    const oldAck = `${Date.parse(receivedAt).toString(36)} lock_price,notify_customer`;
    await r.redis.hset(keys.legacyAcks(r.prefix, '2026-11-25'), 'wh_old', oldAck);

    const repeat = await intake.accept(webhook(event, new Date('2026-11-26T10:00:00.000Z')));
    expect(repeat).toEqual({
      duplicate: true,
      ack: {
        received: true,
        webhook_id: 'wh_old',
        processed_at: receivedAt,
        actions_triggered: ['lock_price', 'notify_customer'],
      },
    });
    expect(await queue.getJobCountByTypes('wait', 'delayed', 'prioritized')).toBe(0);
    expect(await r.redis.exists(hourKey('2026-11-26T09'))).toBe(0);
  });
});
