import { describe, expect, it } from 'vitest';
import { CircuitBoard, circuitKeys } from '../src/circuits/index.js';
import { useScriptRedis } from './script-redis.js';

// lua/circuit-override-2.lua, through the `CircuitBoard` that runs it, against a real Redis.

const r = useScriptRedis();
const TARGET = 'http://partner.test v1/webhooks';

describe('the circuit override script', () => {
  it('opens a closed circuit by hand: manual, named among the targets, since now; again changes nothing', async () => {
    const board = new CircuitBoard(r.redis, { queuePrefix: r.prefix });
    const keys = circuitKeys(r.prefix, TARGET);
    const before = Date.now();
    expect(await board.override(TARGET, 'open')).toBe('opened');
    const fields = await r.redis.hgetall(keys.circuit);
    expect(fields).toMatchObject({ state: 'open', manual: '1' });
    expect(Number(fields.since)).toBeGreaterThanOrEqual(before - 1000);
    expect(await r.redis.smembers(keys.targets)).toEqual([TARGET]);
    expect(await board.override(TARGET, 'open')).toBeNull();
    expect((await r.redis.hgetall(keys.circuit)).since).toBe(fields.since);
  });

  it('closes an open circuit afresh: no probe, no failures, not warm; closing a closed one says so', async () => {
    const board = new CircuitBoard(r.redis, { queuePrefix: r.prefix });
    const keys = circuitKeys(r.prefix, TARGET);
    await r.redis.hset(keys.circuit, {
      state: 'open',
      failures: 7,
      warm: 1,
      manual: 1,
      probe_job: 'j1',
      probe_until: 1,
      next_probe_at: 2,
    });
    expect(await board.override(TARGET, 'closed')).toBe('closed');
    const fields = await r.redis.hgetall(keys.circuit);
    expect(fields).toEqual({ state: 'closed', failures: '0', warm: '0', since: fields.since });
    expect(Number(fields.since)).toBeGreaterThan(0);
    expect(await board.override(TARGET, 'closed')).toBeNull();
  });
});
