import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { circuitKeys } from '@pw/shared/circuits';
import { noCall, OutcomeStore } from '@pw/shared/outcomes';
import { DEAD_LETTER_MIN_SECONDS, keys } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import { createLogger } from '@pw/shared/runtime';
import { deleteKeys, newTestRedis, uniquePrefix } from '@pw/test-utils';
import { ActionStart } from '../src/action-start.js';
import type { TryStart } from '../src/action-start.js';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { CircuitCopy } from '../src/circuit-copy.js';
import { EntityTurns } from '../src/entity-turns.js';

// lua/action-start-4.lua and the circuit's admission before it, through the `ActionStart` that
// runs them, against a real Redis: the out-of-order check, the circuit's admission and the call's
// start in the record; on a first start through a circuit known clean, the partition's alone.

const TARGET = 'http://partner.test v1/webhooks';
let redis: ReturnType<typeof newTestRedis>;
let prefix: string;
let outcomes: OutcomeStore;
let circuits: CircuitBreaker;
let start: ActionStart;

beforeEach(async () => {
  redis = newTestRedis();
  prefix = uniquePrefix();
  outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 600 });
  circuits = new CircuitBreaker(redis, {
    queuePrefix: prefix,
    failureThreshold: 2,
    probeIntervalMs: 600_000,
    leaseMs: 30_000,
  });
  start = new ActionStart(redis, prefix, circuits, outcomes);
  await redis.hset(`${prefix}:outcome:wh_1`, {
    webhook_id: 'wh_1',
    actions: '["notify_crm"]',
    'notify_crm:state': 'waiting',
    'notify_crm:held': 'circuit_open',
  });
  await redis.expire(`${prefix}:outcome:wh_1`, 60);
});
afterEach(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const circuitKeysOf = (target: string) => circuitKeys(prefix, target);

const attempt = (fields: Partial<TryStart> = {}): TryStart => ({
  webhookId: 'wh_1',
  action: 'notify_crm',
  eventType: 'quote.status_changed',
  entityId: 'Q-1',
  staleAfter: 1_000,
  circuit: TARGET,
  jobId: 'job-1',
  order: 1,
  start: true,
  ...fields,
});

describe('the action start script', () => {
  it('starts the call when the circuit lets it through: attempt counted, active, no longer held', async () => {
    const result = await start.begin(attempt());
    expect(result).toEqual({
      stale: false,
      admission: { kind: 'call', tracked: true, report: true },
      counted: 1,
      countsAtEnd: false,
    });
    expect(await outcomes.get('wh_1')).toMatchObject({
      state: 'processing',
      actions: [{ name: 'notify_crm', state: 'active', attempts: 1, held: null }],
    });
    // A start is not recorded, but keeps the record in flight as long as a dead letter.
    expect(await redis.xlen(recordStreamKey(prefix))).toBe(0);
    expect(await redis.ttl(`${prefix}:outcome:wh_1`)).toBe(DEAD_LETTER_MIN_SECONDS);
    // The call holds a lease on the suspect target.
    expect(await redis.zscore(`${prefix}:circuit:${TARGET}:in-flight`, 'job-1')).not.toBeNull();
  });

  it('answers stale, doing nothing else, when a newer event for the entity came first', async () => {
    await redis.set(keys.latest(prefix, 'quote.status_changed', 'Q-1'), '2000');
    expect(await start.begin(attempt())).toEqual({ stale: true });
    expect((await outcomes.get('wh_1'))?.actions[0]).toMatchObject({ state: 'waiting' });
    expect(await redis.exists(`${prefix}:circuit:${TARGET}:in-flight`)).toBe(0);
    // Not checked without the event's time.
    const unchecked = await start.begin(attempt({ staleAfter: undefined }));
    expect(unchecked).toMatchObject({ stale: false, counted: 1 });
  });

  it('holds the job, without starting it, while the circuit is open; starts nothing unless asked', async () => {
    await circuits.leave(TARGET, 'other-1', 'unavailable');
    await circuits.leave(TARGET, 'other-2', 'unavailable');
    const held = await start.begin(attempt());
    expect(held).toMatchObject({ stale: false, counted: 0, admission: { kind: 'hold' } });
    expect(await circuits.held(TARGET)).toEqual(['job-1']);
    expect((await outcomes.get('wh_1'))?.actions[0]).toMatchObject({
      state: 'waiting',
      attempts: 0,
    });

    await circuits.override(TARGET, 'closed');
    const asked = await start.begin(attempt({ start: false }));
    expect(asked).toMatchObject({ admission: { kind: 'call' }, counted: 0 });
    expect((await outcomes.get('wh_1'))?.actions[0]).toMatchObject({ attempts: 0 });
  });
});

describe('the action start after a stall', () => {
  it("counts a stalled first try's call, uncounted as its end never came, once, with the next try's", async () => {
    // The first try (counted at its end) stopped with its worker: nothing counted yet.
    expect(await start.begin(attempt({ stalled: true }))).toMatchObject({ counted: 2 });
    expect((await outcomes.get('wh_1'))?.actions[0]).toMatchObject({
      state: 'active',
      attempts: 2,
    });
    // A later stall finds the attempts counted: the next try counts only itself.
    expect(await start.begin(attempt({ stalled: true }))).toMatchObject({ counted: 3 });
    expect((await outcomes.get('wh_1'))?.actions[0]).toMatchObject({ attempts: 3 });
  });
});

const log = createLogger({ name: 'start-test', level: 'silent' });

/** This process's copy of the circuits, which has read `TARGET` clean. */
async function cleanCopy(subscriber: ReturnType<typeof newTestRedis>): Promise<CircuitCopy> {
  const copy = new CircuitCopy(redis, subscriber, { queuePrefix: prefix, refreshMs: 60_000, log });
  // Answered before the copy listens: its first read finds the circuit clean, and no change
  // announced meanwhile can make it read again between the poll and the start.
  await circuits.leave(TARGET, 'other', 'succeeded');
  await copy.start([TARGET]);
  await expect.poll(() => copy.clean(TARGET)).toBe(true);
  return copy;
}

describe("the action start with this process's copy of the circuits", () => {
  it("lets a first try through a circuit this process's copy says is clean write nothing: its call is counted at its end", async () => {
    const subscriber = newTestRedis();
    const copy = await cleanCopy(subscriber);
    try {
      const withCopy = new ActionStart(redis, prefix, circuits, outcomes, copy);
      // A place in the circuit's line left over (a crash while waking it): only the circuit's own
      // admission takes it off, and a first start never asks it.
      const { held } = circuitKeysOf(TARGET);
      await redis.zadd(held, 1, 'job-1');
      const before = await redis.hgetall(`${prefix}:outcome:wh_1`);
      expect(await withCopy.begin(attempt({ firstStart: true }))).toEqual({
        stale: false,
        admission: { kind: 'call', tracked: false, report: false },
        counted: 0,
        countsAtEnd: true,
      });
      expect(await redis.hgetall(`${prefix}:outcome:wh_1`)).toEqual(before);
      expect(await redis.zrange(held, '0', '-1')).toEqual(['job-1']);
      // Its end writes the record (the call counted, completed), then one stream entry.
      const stream = recordStreamKey(prefix);
      await redis.del(stream);
      await outcomes.completed('wh_1', 'notify_crm', noCall(), 1, true);
      expect((await outcomes.get('wh_1'))?.actions[0]).toMatchObject({
        state: 'completed',
        attempts: 1,
      });
      const entries = await redis.xrange(stream, '-', '+');
      expect(entries).toHaveLength(1);
      const [, fields] = entries[0]!;
      expect(fields.slice(0, 2)).toEqual(['k', 'completed']);
      expect(JSON.parse(fields[3]!)).toMatchObject({
        webhook_id: 'wh_1',
        action: 'notify_crm',
        attempt: 1,
      });
      // Asked to count nothing at its end (an action with limits counts its call before it).
      expect(await withCopy.begin(attempt({ firstStart: true, start: false }))).toMatchObject({
        counted: 0,
        countsAtEnd: false,
      });
      expect(await withCopy.begin(attempt())).toMatchObject({ admission: { kind: 'call' } });
      expect(await redis.zrange(held, '0', '-1')).toEqual([]);
      // Stale all the same.
      await redis.set(keys.latest(prefix, 'quote.status_changed', 'Q-1'), '2000');
      expect(await withCopy.begin(attempt({ firstStart: true }))).toEqual({ stale: true });
    } finally {
      copy.stop();
      subscriber.disconnect();
    }
  });
});

describe("the entity's turn taken with the out-of-order check", () => {
  const turn = {
    eventType: 'quote.status_changed',
    entityId: 'Q-1',
    action: 'lock_price',
    jobId: 'job-1',
    order: 1,
  };

  it('on a first start through a clean circuit: taken when fresh; nothing taken when stale; waited for when another call holds it', async () => {
    const subscriber = newTestRedis();
    const copy = await cleanCopy(subscriber);
    const turns = new EntityTurns(
      redis,
      prefix,
      30_000,
      () => {
        throw new Error('no job is woken here');
      },
      log,
    );
    const withTurn = new ActionStart(redis, prefix, circuits, outcomes, copy, turns);
    const key = keys.turn(prefix, turn.eventType, turn.entityId, turn.action);
    const waiting = keys.turnWaiting(prefix, turn.eventType, turn.entityId, turn.action);
    const first = attempt({ firstStart: true, start: false, countAtEnd: true, turn });
    try {
      expect(await withTurn.begin(first)).toMatchObject({ stale: false, turnWait: 0 });
      expect(await redis.get(key)).toBe('job-1');
      // Another job of the entity, while job-1's call is in flight: it waits the lease's time at most.
      const second = { ...turn, jobId: 'job-2', order: 2 };
      const waits = await withTurn.begin({ ...first, jobId: 'job-2', turn: second });
      expect(waits).toMatchObject({ stale: false });
      expect(waits.stale === false && waits.turnWait).toBeGreaterThan(0);
      expect(await redis.zrange(waiting, '0', '-1')).toEqual(['job-2']);
      await turns.give(turn);
      // A newer event came: job-3's check finds it stale, and it neither takes nor waits.
      await redis.set(keys.latest(prefix, 'quote.status_changed', 'Q-1'), '2000');
      await redis.del(waiting);
      const third = { ...turn, jobId: 'job-3', order: 3 };
      expect(await withTurn.begin({ ...first, jobId: 'job-3', turn: third })).toEqual({
        stale: true,
      });
      expect(await redis.exists(key, waiting)).toBe(0);
    } finally {
      copy.stop();
      subscriber.disconnect();
    }
  });
});
