import { describe, expect, it } from 'vitest';
import { circuitKeys } from '@pw/shared/circuits';
import { openCircuit, redisPerTest } from '@pw/test-utils';
import { CircuitBreaker } from '../src/circuit-breaker.js';

// The other apps' tests read circuits that @pw/test-utils's `openCircuit` leaves in Redis, as they
// cannot drive this breaker: it must leave what the breaker leaves.

const BY_BREAKER = 'http://partner.test v1/breaker';
const BY_FIXTURE = 'http://partner.test v1/fixture';
const t = redisPerTest();

describe('the open circuit of the test fixtures', () => {
  it('has the fields, the held line and the view of a circuit the breaker opened', async () => {
    const breaker = new CircuitBreaker(t.redis, {
      queuePrefix: t.prefix,
      failureThreshold: 2,
      probeIntervalMs: 600_000,
      leaseMs: 30_000,
    });
    await breaker.leave(BY_BREAKER, 'x', 'unavailable');
    await breaker.leave(BY_BREAKER, 'y', 'unavailable');
    await breaker.enter(BY_BREAKER, 'job-2', 2);
    await breaker.enter(BY_BREAKER, 'job-1', 1);
    const held = [
      { id: 'job-1', order: 1 },
      { id: 'job-2', order: 2 },
    ];
    await openCircuit(t.redis, t.prefix, BY_FIXTURE, { failures: 2, probeInMs: 600_000, held });

    const fields = async (target: string) =>
      Object.keys(await t.redis.hgetall(circuitKeys(t.prefix, target).circuit)).sort();
    expect(await fields(BY_FIXTURE)).toEqual(await fields(BY_BREAKER));
    expect(await breaker.held(BY_FIXTURE)).toEqual(await breaker.held(BY_BREAKER));
    const view = async (target: string) => {
      const { since, next_probe_at, ...rest } = await breaker.view(target);
      return { ...rest, target: '', since: typeof since, next_probe_at: typeof next_probe_at };
    };
    expect(await view(BY_FIXTURE)).toEqual(await view(BY_BREAKER));
    expect((await breaker.list()).map((circuit) => circuit.target)).toEqual([
      BY_BREAKER,
      BY_FIXTURE,
    ]);
  });
});
