import { Queue, Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CircuitStore } from '@pw/shared';
import type { CircuitSettings } from '@pw/shared';
import { deleteKeys, newTestRedis, uniquePrefix } from '@pw/test-utils';

// The shared circuit state in Redis, driven as several workers would drive it.

const TARGET = 'http://partner.test v1/webhooks';
let redis: ReturnType<typeof newTestRedis>;
let prefix: string;

beforeEach(() => {
  redis = newTestRedis();
  prefix = uniquePrefix();
});
afterEach(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const store = (settings: Partial<CircuitSettings> = {}) =>
  new CircuitStore(redis, {
    queuePrefix: prefix,
    failureThreshold: 3,
    probeIntervalMs: 60_000,
    leaseMs: 30_000,
    ...settings,
  });

/** Calls that get an answer, so the target is known to answer (not suspect). */
async function warm(circuits: CircuitStore) {
  expect(await circuits.enter(TARGET, 'warm', 1)).toEqual({ kind: 'call', tracked: true });
  await circuits.leave(TARGET, 'warm', 'answered');
  expect(await circuits.enter(TARGET, 'warm-2', 1)).toEqual({ kind: 'call', tracked: false });
}

/** Waits until the circuit's next probe is due on Redis's clock. */
async function probeDue(circuits: CircuitStore) {
  const [seconds, micros] = await redis.time();
  const due = Date.parse((await circuits.view(TARGET)).next_probe_at ?? '');
  const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - redisNow + 5)));
}

describe('circuit state shared through Redis', () => {
  it('opens after the threshold of consecutive retryable failures; an answer in between resets the count', async () => {
    const circuits = store();
    await warm(circuits);
    await circuits.leave(TARGET, 'a', 'unavailable');
    await circuits.leave(TARGET, 'b', 'unavailable');
    expect((await circuits.leave(TARGET, 'c', 'answered')).failures).toBe(0);
    expect((await circuits.leave(TARGET, 'd', 'unavailable')).transition).toBeNull();
    expect((await circuits.leave(TARGET, 'e', 'unavailable')).transition).toBeNull();
    expect(await circuits.leave(TARGET, 'f', 'unavailable')).toEqual({
      state: 'open',
      transition: 'opened',
      failures: 3,
    });
    const hold = await circuits.enter(TARGET, 'g', 10);
    expect(hold.kind).toBe('hold');
    expect(await circuits.view(TARGET)).toMatchObject({
      state: 'open',
      consecutive_failures: 3,
      held_actions: 1,
      manual: false,
    });
    expect((await circuits.list()).map((view) => view.target)).toEqual([TARGET]);
  });

  it('neutral results (no call, a bug) neither open nor close it', async () => {
    const circuits = store();
    await warm(circuits);
    for (const id of ['a', 'b', 'c', 'd']) await circuits.leave(TARGET, id, 'neutral');
    expect((await circuits.view(TARGET)).state).toBe('closed');
  });

  it('a suspect target (failing lately, or never answered) gets no more calls in flight than failures may still happen', async () => {
    const circuits = store();
    const admitted = await Promise.all(
      ['a', 'b', 'c', 'd'].map((id) => circuits.enter(TARGET, id, 1)),
    );
    expect(admitted.map((admission) => admission.kind).sort()).toEqual([
      'call',
      'call',
      'call',
      'wait',
    ]);
    await circuits.leave(TARGET, 'a', 'unavailable');
    // One failure, two calls in flight: no room until one of them ends.
    expect(await circuits.enter(TARGET, 'd', 1)).toEqual({ kind: 'wait' });
    await circuits.leave(TARGET, 'b', 'answered');
    expect(await circuits.enter(TARGET, 'd', 1)).toEqual({ kind: 'call', tracked: false });
  });

  it('while open, one probe per interval across every caller; a probe that gets an answer closes it', async () => {
    const circuits = store({ probeIntervalMs: 200 });
    await warm(circuits);
    for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
    await probeDue(circuits);
    const admissions = await Promise.all(
      Array.from({ length: 20 }, (_, i) => circuits.enter(TARGET, `job-${i}`, i)),
    );
    const probes = admissions.filter((admission) => admission.kind === 'probe');
    expect(probes).toHaveLength(1);
    const prober = `job-${admissions.findIndex((admission) => admission.kind === 'probe')}`;
    // The probe fails: still open, and the next probe is an interval away.
    expect(await circuits.leave(TARGET, prober, 'unavailable')).toMatchObject({
      state: 'open',
      transition: null,
    });
    expect((await circuits.enter(TARGET, prober, 0)).kind).toBe('hold');
    await probeDue(circuits);
    expect(await circuits.enter(TARGET, 'job-1', 1)).toEqual({ kind: 'probe' });
    expect(await circuits.leave(TARGET, 'job-1', 'answered')).toEqual({
      state: 'closed',
      transition: 'closed',
      failures: 0,
    });
    expect(await circuits.enter(TARGET, 'job-2', 2)).toEqual({ kind: 'call', tracked: false });
  });

  it('the first held job comes back for the next probe; the others wait longer or until it closes', async () => {
    const circuits = store({ probeIntervalMs: 1000, maxHoldMs: 90_000 });
    await warm(circuits);
    for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
    const first = await circuits.enter(TARGET, 'old', 1);
    const later = await circuits.enter(TARGET, 'new', 2);
    expect(first.kind === 'hold' && first.delayMs).toBeLessThanOrEqual(1400);
    expect(later).toEqual({ kind: 'hold', delayMs: 90_000, newly: true });
  });

  it('a job is held once: waking to look again is not a new hold', async () => {
    const circuits = store();
    await warm(circuits);
    for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
    expect(await circuits.enter(TARGET, 'job', 1)).toMatchObject({ kind: 'hold', newly: true });
    expect(await circuits.enter(TARGET, 'job', 1)).toMatchObject({ kind: 'hold', newly: false });
  });

  it('a job removed by hand while first in line is passed over: the next one comes back for the probe', async () => {
    const queue = new Queue('actions', { connection: redis, prefix });
    try {
      const circuits = store({ probeIntervalMs: 1000, jobKeyPrefix: queue.toKey('') });
      await warm(circuits);
      for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
      for (const id of ['gone', 'next']) await queue.add('x', {}, { jobId: id, delay: 600_000 });
      expect((await circuits.enter(TARGET, 'gone', 1)).kind).toBe('hold');
      await (await queue.getJob('gone'))!.remove();
      const next = await circuits.enter(TARGET, 'next', 2);
      expect(next.kind === 'hold' && next.delayMs).toBeLessThanOrEqual(1400);
      expect((await circuits.view(TARGET)).held_actions).toBe(1);
    } finally {
      await queue.close();
    }
  });

  it('closing wakes the held jobs, oldest first', async () => {
    const queue = new Queue('actions', { connection: redis, prefix });
    try {
      const circuits = store();
      await warm(circuits);
      for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
      for (const [order, id] of [
        [3, 'third'],
        [1, 'first'],
        [2, 'second'],
      ] as const) {
        await queue.add('x', {}, { jobId: id, delay: 600_000 });
        expect((await circuits.enter(TARGET, id, order)).kind).toBe('hold');
      }
      expect(await circuits.override(TARGET, 'closed')).toBe('closed');
      expect(await circuits.wakeHeld(TARGET, queue)).toBe(3);
      // A worker taking one job at a time takes them oldest first.
      const taken: string[] = [];
      const connection = redis.duplicate({ maxRetriesPerRequest: null });
      const worker = new Worker(
        'actions',
        (job) => {
          taken.push(job.id ?? '');
          return Promise.resolve();
        },
        { connection, prefix, concurrency: 1 },
      );
      await expect.poll(() => taken.length).toBe(3);
      await worker.close();
      connection.disconnect();
      expect(taken).toEqual(['first', 'second', 'third']);
      expect((await circuits.view(TARGET)).held_actions).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('an operator can open a circuit (no probes until closed by hand) and close it', async () => {
    const circuits = store({ probeIntervalMs: 50 });
    await warm(circuits);
    expect(await circuits.override(TARGET, 'open')).toBe('opened');
    expect(await circuits.override(TARGET, 'open')).toBeNull();
    const view = await circuits.view(TARGET);
    expect(view).toMatchObject({ state: 'open', manual: true, next_probe_at: null });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await circuits.enter(TARGET, 'job', 1)).kind).toBe('hold');
    // An answer to a call that was in flight does not close a circuit opened by hand.
    expect((await circuits.leave(TARGET, 'in-flight', 'answered')).state).toBe('open');
    expect(await circuits.override(TARGET, 'closed')).toBe('closed');
    // Closed by hand, the target is suspect until it answers again.
    expect(await circuits.enter(TARGET, 'job', 1)).toEqual({ kind: 'call', tracked: true });
  });
});
