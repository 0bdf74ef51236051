// What a finished webhook leaves in Redis once RECORD_TTL_SECONDS has passed: its jobs and hot
// record are gone (the record store has its history); what stays for the deduplication window
// (the event's entry in an hour hash, with its first ack; the entity's newest time) is small. Measured through npm
// start's real apps under a steady load of waves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import { keysUnder, newTestRedis } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

const WAVE = 300;
const TTL_SECONDS = 1;

let system: RunningSystem;
const redis = newTestRedis();
beforeAll(async () => {
  system = await startSystem({ RECORD_TTL_SECONDS: String(TTL_SECONDS) });
}, 120_000);
afterAll(async () => {
  await system.stop();
  redis.disconnect();
});

const prefix = () => system.env.QUEUE_PREFIX ?? '';
const bytes = async (keys: string[]) =>
  (await Promise.all(keys.map((key) => redis.memory('USAGE', key)))).reduce<number>(
    (sum, size) => sum + (size ?? 0),
    0,
  );

/** One wave of quotes (three actions each), finished and recorded, then the TTL over; its ids. */
async function wave(round: number): Promise<string[]> {
  const start = new Date().toISOString();
  const ids: string[] = [];
  for (let next = 0; next < WAVE; next += 25) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(25, WAVE - next) }, (_, index) =>
        fetch(`${system.url.ingress}/webhooks/quote-status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(
            signEvent(
              sampleEvent('quote', { id: `mem-${round}-${next + index}`, status: 'approved' }),
              DEV_WEBHOOK_SECRET,
            ),
          ),
        }),
      ),
    );
    for (const answer of answers) {
      ids.push(acknowledgementSchema.parse(await answer.json()).webhook_id);
    }
  }
  await system.poll<{ webhooks: { state: string }[] }>(
    `/api/webhooks?limit=500&from=${encodeURIComponent(start)}`,
    (body) =>
      body.webhooks.length === WAVE &&
      body.webhooks.every((webhook) => webhook.state === 'completed'),
  );
  while ((await redis.xlen(`${prefix()}:records`)) > 0) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The TTL itself, by the clock.
  await new Promise((resolve) => setTimeout(resolve, TTL_SECONDS * 1000 + 100));
  return ids;
}

describe('Redis memory per finished webhook', { timeout: 240_000 }, () => {
  it('under 500 bytes once RECORD_TTL_SECONDS has passed: its jobs and hot record have left', async () => {
    const first = new Set(await wave(1));
    // The load goes on: later waves' completions remove the first wave's jobs (BullMQ removes
    // finished jobs older than the TTL as others finish).
    await wave(2);
    await wave(3);

    const keys = await keysUnder(redis, prefix());
    const ofFirst = keys.filter((key) => [...first].some((id) => key.includes(id)));
    expect(ofFirst).toEqual([]);

    // What the first wave left: its entries in the hour hashes of deduplication (each field's
    // value, the first ack, opens with the webhook id) and its entities' newest times.
    const latest = keys.filter((key) => key.includes(':latest:') && key.includes('Q-mem-1-'));
    expect(latest).toHaveLength(WAVE);
    let held = 0;
    let dedupBytes = 0;
    for (const hour of keys.filter((key) => key.includes(':dedup:'))) {
      const acks = await redis.hvals(hour);
      const ofWave = acks.filter((ack) => first.has(ack.split(' ')[0] ?? '')).length;
      held += ofWave;
      dedupBytes += ((await bytes([hour])) * ofWave) / acks.length;
    }
    expect(held).toBe(WAVE);
    const perWebhook = ((await bytes(latest)) + dedupBytes) / WAVE;
    console.log(
      `Redis bytes a finished webhook leaves for the deduplication window: ${perWebhook}`,
    );
    expect(perWebhook).toBeLessThan(500);
  });
});
