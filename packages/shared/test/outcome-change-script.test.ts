import { describe, expect, it } from 'vitest';
import { OUTCOME_CHANGE_COMMAND, withCommand } from '../src/lua/index.js';
import { ACTION_COUNTS_KEEP_SECONDS, DEAD_LETTER_MIN_SECONDS } from '../src/queue/index.js';
import type { OutcomeChangeCommand } from '../src/lua/index.js';
import { received, useScriptRedis } from './script-redis.js';

// lua/outcome-change-3.lua on its own, against a real Redis.

const r = useScriptRedis();

interface Change {
  countAttempt?: string;
  remove?: string;
  attempt?: string;
  count?: string;
  fields: string[];
}

const record = () => `${r.prefix}:outcome:wh_1`;

function change(c: Change) {
  const redis = withCommand<OutcomeChangeCommand>(r.redis, OUTCOME_CHANGE_COMMAND);
  return redis.pwOutcomeChange(
    ...[record(), `${r.prefix}:records`, `${r.prefix}:action-counts`],
    ...[
      DEAD_LETTER_MIN_SECONDS,
      `${r.prefix}:changes`,
      'wh_1',
      c.countAttempt ?? '',
      c.remove ?? '',
    ],
    ...[c.attempt ?? '', c.count ?? '', ...c.fields],
  );
}

/** A record of two actions, both waiting, kept as long as the intake keeps it. */
async function twoActions() {
  await r.redis.hset(record(), {
    webhook_id: 'wh_1',
    actions: '["a","b"]',
    'a:state': 'waiting',
    'b:state': 'waiting',
  });
  await r.redis.expire(record(), DEAD_LETTER_MIN_SECONDS);
}

const streamEntries = async () =>
  (await r.redis.xrange(`${r.prefix}:records`, '-', '+')).map(([, fields]) => fields);

describe('the outcome change script', () => {
  it('refuses (0) a change to a record that is gone, and writes nothing', async () => {
    expect(await change({ fields: ['a:state', 'active'], attempt: '{}', count: 'failed' })).toBe(0);
    expect(await r.redis.exists(record(), `${r.prefix}:records`, `${r.prefix}:action-counts`)).toBe(
      0,
    );
  });

  it('sets fields, counts the attempt (answering the count), removes fields; a start (-) is not recorded but keeps the record', async () => {
    await twoActions();
    await r.redis.hset(record(), 'a:held', 'circuit_open', 'a:attempts', '2');
    await r.redis.expire(record(), 60);
    const messages = await r.listen(`${r.prefix}:changes`);
    const started = {
      fields: ['a:state', 'active'],
      countAttempt: 'a:attempts',
      remove: 'a:held a:nothing',
      attempt: '-',
    };
    expect(await change(started)).toBe(3);
    expect(await r.redis.hgetall(record())).toMatchObject({
      'a:state': 'active',
      'a:attempts': '3',
    });
    expect(await r.redis.hexists(record(), 'a:held')).toBe(0);
    expect(await streamEntries()).toEqual([]);
    expect(await r.redis.ttl(record())).toBe(DEAD_LETTER_MIN_SECONDS);
    expect(await received(messages)).toEqual(['wh_1']);
  });

  it('keeps a finished record as long as a dead letter (the recorder shortens it), and records the change', async () => {
    await twoActions();
    await r.redis.expire(record(), 10);
    expect(
      await change({ fields: ['a:state', 'completed'], attempt: '{"n":1}', count: 'completed' }),
    ).toBe(1);
    expect(await r.redis.ttl(record())).toBe(DEAD_LETTER_MIN_SECONDS);
    await change({ fields: ['b:state', 'completed'], attempt: '{"n":2}', count: 'completed' });
    expect(await r.redis.ttl(record())).toBe(DEAD_LETTER_MIN_SECONDS);
    const entries = await streamEntries();
    expect(entries).toHaveLength(2);
    const [k, kind, d, snapshot, a, attempt] = entries[1]!;
    expect([k, kind, d, a, attempt]).toEqual(['k', 'outcome', 'd', 'a', '{"n":2}']);
    expect(JSON.parse(snapshot!)).toEqual({
      webhook_id: 'wh_1',
      actions: '["a","b"]',
      'a:state': 'completed',
      'b:state': 'completed',
    });
    expect(await r.redis.hgetall(`${r.prefix}:action-counts`)).toEqual({ completed: '2' });
    expect(await r.redis.ttl(`${r.prefix}:action-counts`)).toBe(ACTION_COUNTS_KEEP_SECONDS);
  });

  it('keeps a record with a failed action as long as a dead letter, even when it had less', async () => {
    await twoActions();
    await r.redis.expire(record(), 10);
    await change({ fields: ['a:state', 'completed'], attempt: '{}' });
    await change({ fields: ['b:state', 'failed'], attempt: '{}', count: 'failed' });
    expect(await r.redis.ttl(record())).toBe(DEAD_LETTER_MIN_SECONDS);
    expect(await r.redis.hgetall(`${r.prefix}:action-counts`)).toEqual({ failed: '1' });
  });

  it('records a change without an attempt with an empty one, and counts nothing without a count', async () => {
    await twoActions();
    await change({ fields: ['a:state', 'waiting'] });
    const [entry] = await streamEntries();
    expect(entry?.slice(4)).toEqual(['a', '']);
    expect(await r.redis.exists(`${r.prefix}:action-counts`)).toBe(0);
  });
});
