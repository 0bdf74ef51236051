import calculateSlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '../events/acknowledgement.js';
import { CLUSTER_SLOTS, newWebhookId, Partitions } from './partitions.js';

const keyed = (partitions: Partitions, secret: string) => {
  partitions.keyMap(Buffer.from(secret).toString('base64url'));
  return partitions;
};

const ackWith = (webhookId: string) => ({
  received: true,
  processed_at: new Date().toISOString(),
  webhook_id: webhookId,
  actions_triggered: [],
});

describe('newWebhookId', () => {
  it('is `wh_` and 22 base64url characters, as the ack schema and the operator API expect', () => {
    const id = newWebhookId();
    expect(id).toMatch(/^wh_[A-Za-z0-9_-]{22}$/);
    expect(acknowledgementSchema.safeParse(ackWith(id)).success).toBe(true);
  });

  it('never repeats across refills of its pool of random bytes', () => {
    const ids = Array.from({ length: 1000 }, () => newWebhookId());
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('Partitions', () => {
  it('with one partition, keeps the queue prefix itself: the layout of a system without partitions', () => {
    const partitions = new Partitions('pw', 1);
    expect(partitions.prefixes).toEqual(['pw']);
    expect(partitions.ofEntity('Q-1')).toBe(0);
    expect(partitions.ofWebhookId(newWebhookId())).toBe(0);
  });

  it('puts each partition under a hash tag of its own, in its own equal share of the slot space', () => {
    for (const count of [4, 12, 48]) {
      const partitions = new Partitions('{pw}', count);
      const slots = partitions.prefixes.map((prefix) => calculateSlot(`${prefix}:actions:wait`));
      expect(new Set(partitions.prefixes).size).toBe(count);
      slots.forEach((slot, index) => {
        expect(slot).toBeGreaterThanOrEqual(Math.ceil((index * CLUSTER_SLOTS) / count));
        expect(slot).toBeLessThan(Math.ceil(((index + 1) * CLUSTER_SLOTS) / count));
      });
    }
    // A prefix with or without braces derives the same tags; the shared prefix stays as given.
    expect(new Partitions('pw', 12).prefixes).toEqual(new Partitions('{pw}', 12).prefixes);
    expect(new Partitions('{pw}', 12).prefix(3)).toMatch(/^\{pw:3(:\d+)?\}$/);
  });

  it('names the partition in the webhook id, and keeps the id unguessable and well formed', () => {
    const partitions = new Partitions('pw', 12);
    for (const index of partitions.all()) {
      const ids = Array.from({ length: 50 }, () => partitions.newWebhookId(index));
      for (const id of ids) {
        expect(id).toMatch(/^wh_[A-Za-z0-9_-]{22}$/);
        expect(partitions.ofWebhookId(id)).toBe(index);
      }
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('gives one entity the same partition every time, and spreads entities over all of them', () => {
    const partitions = keyed(new Partitions('pw', 12), 'a-secret');
    expect(partitions.ofEntity('Q-42')).toBe(
      keyed(new Partitions('pw', 12), 'a-secret').ofEntity('Q-42'),
    );
    const counts = new Array<number>(12).fill(0);
    for (let i = 0; i < 12_000; i++) counts[partitions.ofEntity(`Q-${i}`)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });

  it('maps entities by its secret: ids that collide under one secret spread under another', () => {
    const partitions = new Partitions('pw', 64);
    expect(partitions.mapped).toBe(false);
    expect(() => partitions.ofEntity('Q-1')).toThrow(/keyed once the partition count is claimed/);
    const known = keyed(new Partitions('pw', 64), 'the-secret-a-sender-learnt');
    const aimed = Array.from({ length: 20_000 }, (_, i) => `Q-${i}`).filter(
      (id) => known.ofEntity(id) === 0,
    );
    expect(aimed.length).toBeGreaterThan(200);
    keyed(partitions, 'the-secret-kept-in-redis');
    expect(partitions.mapped).toBe(true);
    const spread = new Set(aimed.map((id) => partitions.ofEntity(id)));
    expect(spread.size).toBeGreaterThan(48);
  });

  it('reads WORKER_PARTITIONS as partitions and ranges, and names what is wrong in one line', () => {
    const partitions = new Partitions('pw', 12);
    expect(partitions.select(undefined)).toEqual(partitions.all());
    expect(partitions.select('0-3,7, 3')).toEqual([0, 1, 2, 3, 7]);
    expect(partitions.select('12')).toBe('12 is not a partition: QUEUE_PARTITIONS is 12 (0-11)');
    expect(partitions.select('5-2')).toBe('"5-2" runs backwards');
    expect(partitions.select('a')).toBe('"a" is not a partition or a range (0-3,7)');
  });
});
