import { describe, expect, it } from 'vitest';
import {
  DEAD_LETTER_MIN_SECONDS,
  INGRESS_COUNTS_KEEP_SECONDS,
  INTAKE_COMMAND,
  withCommand,
} from '../src/index.js';
import { received, useScriptRedis } from './script-redis.js';

// lua/intake.lua on its own, against a real Redis: the keys it writes, their times, its reply.

interface IntakeCommand {
  pwIntake(...args: (string | number)[]): Promise<string>;
}

const r = useScriptRedis();
const DEDUP_MS = 60_000;
const RECORD_TTL = 3600;
const ACK_SECONDS = 86_400;
const LATEST_MS = 120_000;
const MINUTE = '2026-11-25T04:07:00.000Z';

const keysOf = (p: string, blocks: string[] = []) => [
  `${p}:dedup`,
  `${p}:outcome:wh_1`,
  `${p}:records`,
  `${p}:acks`,
  `${p}:counts`,
  `${p}:counts-changed`,
  `${p}:latest`,
  ...blocks,
];

/** Runs the intake of webhook `id` with an event time (ms; '' for none). */
function intake(id: string, eventTimeMs: number | '', blocks: string[] = []) {
  const redis = withCommand<IntakeCommand>(r.redis, INTAKE_COMMAND);
  const keys = keysOf(r.prefix, blocks);
  return redis.pwIntake(
    keys.length,
    ...keys,
    ...[DEDUP_MS, RECORD_TTL, `${r.prefix}:changes`, id, `{"webhook_id":"${id}"}`, 'ack-of-' + id],
    ...[ACK_SECONDS, MINUTE, eventTimeMs, LATEST_MS],
    ...['webhook_id', id, 'actions', '["notify_crm"]', 'notify_crm:state', 'waiting'],
  );
}

describe('the intake script', () => {
  it('takes in a first delivery: dedup key, record, stream entry, kept ack, counts, newest time, announced', async () => {
    const p = r.prefix;
    const messages = await r.listen(`${p}:changes`);
    expect(await intake('wh_1', 1_000)).toBe('wh_1');

    expect(await r.redis.get(`${p}:dedup`)).toBe('wh_1');
    expect(await r.redis.pttl(`${p}:dedup`)).toBeGreaterThan(DEDUP_MS - 5_000);
    expect(await r.redis.hgetall(`${p}:outcome:wh_1`)).toEqual({
      webhook_id: 'wh_1',
      actions: '["notify_crm"]',
      'notify_crm:state': 'waiting',
    });
    // In flight: kept as long as a dead letter, never the shorter RECORD_TTL.
    expect(await r.redis.ttl(`${p}:outcome:wh_1`)).toBe(DEAD_LETTER_MIN_SECONDS);
    const [[, entry]] = (await r.redis.xrange(`${p}:records`, '-', '+')) as [[string, string[]]];
    expect(entry).toEqual(['k', 'webhook', 'd', '{"webhook_id":"wh_1"}']);
    expect(await r.redis.hgetall(`${p}:acks`)).toEqual({ wh_1: 'ack-of-wh_1' });
    expect(await r.redis.ttl(`${p}:acks`)).toBe(ACK_SECONDS);
    expect(await r.redis.hgetall(`${p}:counts`)).toEqual({ accepted: '1' });
    expect(await r.redis.ttl(`${p}:counts`)).toBe(INGRESS_COUNTS_KEEP_SECONDS);
    expect(await r.redis.smembers(`${p}:counts-changed`)).toEqual([MINUTE]);
    expect(await r.redis.get(`${p}:latest`)).toBe('1000');
    expect(await r.redis.pttl(`${p}:latest`)).toBeGreaterThan(LATEST_MS - 5_000);
    expect(await received(messages)).toEqual(['wh_1']);
  });

  it('marks a delivery stale when the entity has a newer event, and keeps the newer time', async () => {
    await r.redis.set(`${r.prefix}:latest`, '5000');
    await intake('wh_1', 1_000);
    expect(await r.redis.hget(`${r.prefix}:outcome:wh_1`, 'stale')).toBe('1');
    expect(await r.redis.get(`${r.prefix}:latest`)).toBe('5000');
    // Its time is renewed, though.
    expect(await r.redis.pttl(`${r.prefix}:latest`)).toBeGreaterThan(LATEST_MS - 5_000);
  });

  it('an event of the same time is not stale; one without a time leaves the newest time alone', async () => {
    await r.redis.set(`${r.prefix}:latest`, '1000');
    await intake('wh_1', 1_000);
    expect(await r.redis.hget(`${r.prefix}:outcome:wh_1`, 'stale')).toBeNull();
    await r.redis.del(`${r.prefix}:dedup`, `${r.prefix}:latest`);
    await intake('wh_1', '');
    expect(await r.redis.exists(`${r.prefix}:latest`)).toBe(0);
  });

  it('answers a repeat with the first id and writes nothing but the blocks on its action jobs', async () => {
    const p = r.prefix;
    await r.redis.set(`${p}:dedup`, 'wh_first');
    const messages = await r.listen(`${p}:changes`);
    const blocks = [`${p}:block-a`, `${p}:block-b`];
    expect(await intake('wh_1', 1_000, blocks)).toBe('wh_first');
    for (const block of blocks) {
      expect(await r.redis.get(block)).toBe('wh_first');
      const left = await r.redis.pttl(block);
      expect(left).toBeGreaterThan(5_000);
      expect(left).toBeLessThanOrEqual(10_000);
    }
    const written = keysOf(p).slice(1);
    expect(await r.redis.exists(...written)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(messages).toEqual([]);
  });
});
