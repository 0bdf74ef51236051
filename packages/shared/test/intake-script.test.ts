import { describe, expect, it } from 'vitest';
import { INTAKE_COMMAND } from '../src/intake/intake-commands.js';
import { withCommand } from '../src/lua/index.js';
import { DEAD_LETTER_MIN_SECONDS } from '../src/queue/index.js';
import { INGRESS_COUNTS_KEEP_SECONDS } from '../src/records/index.js';
import { received, useScriptRedis } from './script-redis.js';

// lua/intake.lua on its own, against a real Redis: the keys it writes, their times, its reply.

interface IntakeCommand {
  pwIntake(...args: (string | number | Buffer)[]): Promise<string>;
}

const r = useScriptRedis();
const KEEP_MS = 60_000;
const RECORD_TTL = 3600;
const LATEST_MS = 120_000;
const MINUTE = '2026-11-25T04:07:00.000Z';
/** The event's field in the hour's hash: 16 bytes of its digest. */
const FIELD = Buffer.from('9f2c4e7a0b1d3c5e6f708192a3b4c5d6', 'hex');
const ACK = 'wh_1 mie4abcd notify_crm,update_crm';

const keysOf = (p: string, blocks: string[] = []) => [
  `${p}:dedup`,
  `${p}:outcome:wh_1`,
  `${p}:records`,
  `${p}:legacy-dedup`,
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
    ...[FIELD, KEEP_MS, RECORD_TTL, `${r.prefix}:changes`, id, `{"webhook_id":"${id}"}`],
    ...[id === 'wh_1' ? ACK : `${id} mie4abcd `, MINUTE, eventTimeMs, LATEST_MS],
    ...['webhook_id', id, 'actions', '["notify_crm"]', 'notify_crm:state', 'waiting'],
  );
}

/** Expects that a repeat wrote its blocks and nothing else (no key, no announcement). */
async function expectOnlyBlocks(blocks: string[], first: string, messages: string[]) {
  for (const block of blocks) {
    expect(await r.redis.get(block)).toBe(first);
    const left = await r.redis.pttl(block);
    expect(left).toBeGreaterThan(5_000);
    expect(left).toBeLessThanOrEqual(10_000);
  }
  const written = keysOf(r.prefix)
    .slice(1)
    .filter((key) => !key.endsWith(':legacy-dedup'));
  expect(await r.redis.exists(...written)).toBe(0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(messages).toEqual([]);
}

describe('the intake script', () => {
  it('takes in a first delivery: its ack in the hour hash, record, stream entry, counts, newest time, announced', async () => {
    const p = r.prefix;
    const messages = await r.listen(`${p}:changes`);
    expect(await intake('wh_1', 1_000)).toBe('wh_1');

    expect(await r.redis.hgetBuffer(`${p}:dedup`, FIELD)).toEqual(Buffer.from(ACK));
    expect(await r.redis.hlen(`${p}:dedup`)).toBe(1);
    expect(await r.redis.pttl(`${p}:dedup`)).toBeGreaterThan(KEEP_MS - 5_000);
    // The previous version's key is read, never written.
    expect(await r.redis.exists(`${p}:legacy-dedup`)).toBe(0);
    expect(await r.redis.hgetall(`${p}:outcome:wh_1`)).toEqual({
      webhook_id: 'wh_1',
      actions: '["notify_crm"]',
      'notify_crm:state': 'waiting',
    });
    // In flight: kept as long as a dead letter, never the shorter RECORD_TTL.
    expect(await r.redis.ttl(`${p}:outcome:wh_1`)).toBe(DEAD_LETTER_MIN_SECONDS);
    const [[, entry]] = (await r.redis.xrange(`${p}:records`, '-', '+')) as [[string, string[]]];
    expect(entry).toEqual(['k', 'webhook', 'd', '{"webhook_id":"wh_1"}']);
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

  it('answers a repeat with the id of the ack its event holds, and writes nothing but the blocks on its action jobs', async () => {
    const p = r.prefix;
    await r.redis.hset(`${p}:dedup`, FIELD, 'wh first 1 mie4abcd notify_crm');
    await r.redis.pexpire(`${p}:dedup`, 30_000);
    const messages = await r.listen(`${p}:changes`);
    const blocks = [`${p}:block-a`, `${p}:block-b`];
    // An id is read from the right of the ack: it may hold a space.
    expect(await intake('wh_2', 1_000, blocks)).toBe('wh first 1');
    await expectOnlyBlocks(blocks, 'wh first 1', messages);
    // The hour's hash is left as it was.
    expect(await r.redis.hlen(`${p}:dedup`)).toBe(1);
    expect(await r.redis.hget(`${p}:dedup`, FIELD)).toBe('wh first 1 mie4abcd notify_crm');
    expect(await r.redis.pttl(`${p}:dedup`)).toBeLessThanOrEqual(30_000);
  });

  it('answers a repeat of an event the previous version took in from its key, and writes nothing else', async () => {
    const p = r.prefix;
    await r.redis.set(`${p}:legacy-dedup`, 'wh_old');
    const messages = await r.listen(`${p}:changes`);
    const blocks = [`${p}:block-a`];
    expect(await intake('wh_1', 1_000, blocks)).toBe('wh_old');
    await expectOnlyBlocks(blocks, 'wh_old', messages);
    expect(await r.redis.exists(`${p}:dedup`)).toBe(0);
    expect(await r.redis.get(`${p}:legacy-dedup`)).toBe('wh_old');
  });
});
