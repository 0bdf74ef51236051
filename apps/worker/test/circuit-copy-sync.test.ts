import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBoard, circuitKeys } from '@pw/shared/circuits';
import { createLogger } from '@pw/shared/runtime';
import { newTestRedis, redisPerTest } from '@pw/test-utils';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { CircuitCopy } from '../src/circuit-copy.js';

// How a worker's copy of the circuits follows what every process writes, against a real Redis.

const TARGET = 'http://partner.test r/c';
const t = redisPerTest();
const subscribers: ReturnType<typeof newTestRedis>[] = [];
const copies: CircuitCopy[] = [];
afterEach(() => {
  for (const copy of copies.splice(0)) copy.stop();
  for (const connection of subscribers.splice(0)) connection.disconnect();
});

async function startCopy(refreshMs = 60_000) {
  const subscriber = newTestRedis();
  subscribers.push(subscriber);
  const log = createLogger({ name: 'copy-test', level: 'silent' });
  const copy = new CircuitCopy(t.redis, subscriber, { queuePrefix: t.prefix, refreshMs, log });
  copies.push(copy);
  await copy.start([TARGET]);
  return { copy, subscriber };
}

/** Another worker process's breaker. */
const breaker = () => {
  const connection = newTestRedis();
  subscribers.push(connection);
  return new CircuitBreaker(connection, {
    queuePrefix: t.prefix,
    failureThreshold: 2,
    probeIntervalMs: 1000,
    leaseMs: 30_000,
  });
};

describe("a worker's copy of the circuits", () => {
  it('says clean once the target answered; hears at once of a failure or an override elsewhere', async () => {
    const { copy } = await startCopy();
    const other = breaker();
    // Never answered: suspect.
    expect(copy.clean(TARGET)).toBe(false);
    await other.leave(TARGET, 'job-1', 'succeeded');
    await expect.poll(() => copy.clean(TARGET)).toBe(true);

    await other.leave(TARGET, 'job-2', 'unavailable');
    await expect.poll(() => copy.clean(TARGET)).toBe(false);
    await other.leave(TARGET, 'job-3', 'succeeded');
    await expect.poll(() => copy.clean(TARGET)).toBe(true);

    // An operator opens it.
    await new CircuitBoard(t.redis, { queuePrefix: t.prefix }).override(TARGET, 'open');
    await expect.poll(() => copy.clean(TARGET)).toBe(false);
  });

  it('reads every circuit again when its subscription reconnects, and now and then', async () => {
    const { copy, subscriber } = await startCopy();
    await breaker().leave(TARGET, 'job-1', 'succeeded');
    await expect.poll(() => copy.clean(TARGET)).toBe(true);
    // A change it could not hear (its subscription was down meanwhile).
    const { circuit } = circuitKeys(t.prefix, TARGET);
    await t.redis.hset(circuit, 'failures', 1);
    subscriber.disconnect(true);
    await once(subscriber, 'ready');
    await expect.poll(() => copy.clean(TARGET)).toBe(false);

    const periodic = await startCopy(50);
    await t.redis.hset(circuit, 'failures', 0);
    await expect.poll(() => periodic.copy.clean(TARGET)).toBe(true);
    await t.redis.hset(circuit, 'failures', 1);
    await expect.poll(() => periodic.copy.clean(TARGET)).toBe(false);
  });
});
