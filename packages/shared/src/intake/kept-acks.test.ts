import { describe, expect, it } from 'vitest';
import { decodeAck, dedupBucket, dedupField, dedupKeepMs, encodeAck } from './kept-acks.js';

const HOUR = 3_600_000;

describe('the kept first ack', () => {
  it('is rebuilt exactly from its value: id, acceptance time to the millisecond, actions in order', () => {
    const ack = {
      webhook_id: 'wh_Zx9-_aB3cD4eF5gH6iJ7kL',
      received_at: '2026-11-26T10:42:01.007Z',
      actions: ['update_sales_opportunity', 'notify_customer', 'lock_price'],
    };
    expect(decodeAck(encodeAck(ack))).toEqual(ack);
    expect(decodeAck(encodeAck({ ...ack, actions: [] }))).toEqual({ ...ack, actions: [] });
    // An id is read from the right: it may hold a space.
    expect(decodeAck(encodeAck({ ...ack, webhook_id: 'wh 1' }))?.webhook_id).toBe('wh 1');
    expect(decodeAck('garbage')).toBeNull();
  });

  it('says when its event was quarantined (kept without actions), apart from an event that set off none', () => {
    const ack = { webhook_id: 'wh_1', received_at: '2026-11-26T10:42:01.007Z', actions: [] };
    expect(decodeAck(encodeAck({ ...ack, quarantined: true }))).toEqual({
      ...ack,
      quarantined: true,
    });
    expect(decodeAck(encodeAck(ack))).toEqual(ack);
  });

  it('says when a quarantined event was discarded since, apart from one still quarantined', () => {
    const ack = { webhook_id: 'wh_1', received_at: '2026-11-26T10:42:01.007Z', actions: [] };
    expect(decodeAck(encodeAck({ ...ack, discarded: true }))).toEqual({ ...ack, discarded: true });
    expect(encodeAck({ ...ack, discarded: true })).not.toBe(
      encodeAck({ ...ack, quarantined: true }),
    );
  });
});

describe("an event's place for the deduplication window", () => {
  it('is the UTC hour of its timestamp, or one bucket for events whose timestamp does not read', () => {
    expect(dedupBucket(Date.parse('2026-11-26T10:59:59.999Z'))).toBe('2026-11-26T10');
    expect(dedupBucket(Date.parse('2026-11-26T11:00:00.000+01:00'))).toBe('2026-11-26T10');
    expect(dedupBucket(undefined)).toBe('untimed');
  });

  it('is named by the first 16 bytes of its digest', () => {
    const digest = 'ab'.repeat(32);
    expect(dedupField(digest)).toEqual(Buffer.alloc(16, 0xab));
  });

  it("is kept the window after the later of its hour's end and the time the event was taken in", () => {
    const window = 604_860_000;
    const at = Date.parse('2026-11-26T10:15:00.000Z');
    // Taken in on time: the rest of the hour, then the window.
    expect(dedupKeepMs(at, at + 1000, window)).toBe(45 * 60_000 - 1000 + window);
    // Dated ahead, within the skew allowance: until its own hour's end.
    expect(dedupKeepMs(at + HOUR, at, window)).toBe(HOUR + 45 * 60_000 + window);
    // Taken in after its hour (a late delivery, or a caller without the freshness check).
    expect(dedupKeepMs(at, at + 5 * HOUR, window)).toBe(window);
    expect(dedupKeepMs(undefined, at, window)).toBe(window);
  });
});
