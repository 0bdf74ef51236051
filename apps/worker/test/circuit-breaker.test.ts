import { Queue, Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { actionJobId, ActionQueues, Partitions, webhookIdOfJob } from '@pw/shared/queue';
import { redisPerTest } from '@pw/test-utils';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import type { CallResult, CircuitBreakerSettings } from '../src/circuit-breaker.js';

// The circuit breaker (lua/circuit-enter-6.lua, lua/circuit-leave-6.lua): the shared circuit
// state in Redis, driven as several workers would drive it, on a clock the test moves.

const TARGET = 'http://partner.test v1/webhooks';
const t = redisPerTest();

/** The circuits' clock: the tests move it (`tick`), so no test waits for a probe. */
let now = 1_800_000_000_000;
const tick = (ms: number) => (now += ms);

const store = (settings: Partial<CircuitBreakerSettings> = {}) =>
  new CircuitBreaker(
    t.redis,
    {
      queuePrefix: t.prefix,
      failureThreshold: 3,
      probeIntervalMs: 60_000,
      leaseMs: 30_000,
      clock: () => now,
      ...settings,
    },
    // No jitter: the probe is due exactly an interval after the last.
    () => 0,
  );

/** An action job of the partition its id names, asleep as a held job is. */
const addDelayed = (queues: ActionQueues, jobId: string) =>
  queues.ofJob(jobId).add(
    'notify_customer',
    {
      webhook_id: webhookIdOfJob(jobId),
      action: 'notify_customer',
      event_type: 'quote.status_changed',
      event: {},
      backoff: { type: 'fixed', delay_ms: 20 },
    },
    { jobId, delay: 600_000 },
  );

const CLEAN = { kind: 'call', tracked: false, report: false };
const TRACKED = { kind: 'call', tracked: true, report: true };

/** A call that gets a 2xx, so the target is known to serve (clean, not suspect). */
async function warm(circuits: CircuitBreaker) {
  expect(await circuits.enter(TARGET, 'warm', 1)).toEqual(TRACKED);
  await circuits.leave(TARGET, 'warm', 'succeeded');
  expect(await circuits.enter(TARGET, 'warm-2', 1)).toEqual(CLEAN);
}

/** Moves the clock to the circuit's next probe. */
async function probeDue(circuits: CircuitBreaker) {
  const due = Date.parse((await circuits.view(TARGET)).next_probe_at ?? '');
  now = Math.max(now, due);
}

/** Opens the circuit with `threshold` failures of calls no job waits for. */
async function open(circuits: CircuitBreaker, threshold = 3) {
  for (let i = 0; i < threshold; i++) {
    tick(1);
    await circuits.leave(TARGET, `opener-${i}`, 'unavailable');
  }
  expect((await circuits.view(TARGET)).state).toBe('open');
}

/** The job's probe, once due; it ends with `result`. */
async function probe(circuits: CircuitBreaker, jobId: string, order: number, result: CallResult) {
  await probeDue(circuits);
  expect(await circuits.enter(TARGET, jobId, order)).toEqual({ kind: 'probe' });
  tick(1);
  return circuits.leave(TARGET, jobId, result);
}

describe('opening: the circuit judges the target, across inputs', () => {
  it('opens after the threshold of consecutive retryable failures; a 2xx in between resets the count', async () => {
    const circuits = store();
    await warm(circuits);
    await circuits.leave(TARGET, 'a', 'unavailable');
    await circuits.leave(TARGET, 'b', 'unavailable');
    expect((await circuits.leave(TARGET, 'c', 'succeeded')).failures).toBe(0);
    expect((await circuits.leave(TARGET, 'd', 'unavailable')).transition).toBeNull();
    expect((await circuits.leave(TARGET, 'e', 'unavailable')).transition).toBeNull();
    expect(await circuits.leave(TARGET, 'f', 'unavailable')).toEqual({
      state: 'open',
      transition: 'opened',
      failures: 3,
      wake: null,
      poison: false,
      judged: false,
      held: false,
    });
    expect((await circuits.enter(TARGET, 'g', 10)).kind).toBe('hold');
    expect(await circuits.view(TARGET)).toMatchObject({
      state: 'open',
      consecutive_failures: 3,
      held_actions: 1,
      manual: false,
    });
    expect(await t.redis.hget(`${t.prefix}:circuit:${TARGET}`, 'reason')).toBe('failures');
    expect((await circuits.list()).map((view) => view.target)).toEqual([TARGET]);
  });

  it('neutral results (no call, a bug) and refusals (a 4xx to one input) neither open nor close it', async () => {
    const circuits = store();
    await warm(circuits);
    for (const id of ['a', 'b', 'c', 'd']) await circuits.leave(TARGET, id, 'neutral');
    for (const id of ['e', 'f', 'g', 'h']) await circuits.leave(TARGET, id, 'refused');
    expect((await circuits.view(TARGET)).state).toBe('closed');
    // A refusal is not a 2xx: two failures, four refusals, one more failure opens it.
    await circuits.leave(TARGET, 'i', 'unavailable');
    await circuits.leave(TARGET, 'j', 'unavailable');
    await circuits.leave(TARGET, 'k', 'refused');
    expect((await circuits.leave(TARGET, 'l', 'unavailable')).transition).toBe('opened');
  });

  it('a suspect target (failing lately, or never served) gets no more calls in flight than failures may still happen', async () => {
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
    await circuits.leave(TARGET, 'b', 'succeeded');
    // Clean again; `a` has a failure to forget, so its answer is reported even so.
    expect(await circuits.enter(TARGET, 'd', 1)).toEqual(CLEAN);
    expect(await circuits.enter(TARGET, 'a', 1)).toEqual({ ...CLEAN, report: true });
  });
});

describe('late answers: a 2xx to a call sent before the last failure', () => {
  it('leaves the target suspect and its count as it was; a 2xx to a later call resets it', async () => {
    const circuits = store();
    await warm(circuits);
    // `a` is sent; then the target fails `b` and `c`; then `a`'s 2xx comes back.
    const aSent = now;
    tick(10);
    await circuits.leave(TARGET, 'b', 'unavailable');
    tick(10);
    await circuits.leave(TARGET, 'c', 'unavailable');
    tick(10);
    expect((await circuits.leave(TARGET, 'a', 'succeeded', now - aSent)).failures).toBe(2);
    expect(await circuits.enter(TARGET, 'd', 1)).toEqual(TRACKED);
    // A 2xx to `d`, sent after the failures, makes it clean again.
    tick(10);
    expect((await circuits.leave(TARGET, 'd', 'succeeded', 5)).failures).toBe(0);
    expect(await circuits.enter(TARGET, 'e', 1)).toEqual(CLEAN);
    // Two failures, a late 2xx, one more failure: open.
    const fSent = now;
    tick(10);
    await circuits.leave(TARGET, 'g', 'unavailable');
    await circuits.leave(TARGET, 'h', 'unavailable');
    tick(10);
    await circuits.leave(TARGET, 'f', 'succeeded', now - fSent);
    expect((await circuits.leave(TARGET, 'i', 'unavailable')).transition).toBe('opened');
  });

  it("does not close an open circuit; the probe's 2xx does", async () => {
    const circuits = store();
    await warm(circuits);
    const aSent = now;
    await open(circuits);
    tick(10);
    expect((await circuits.leave(TARGET, 'a', 'succeeded', now - aSent)).state).toBe('open');
    await probeDue(circuits);
    expect(await circuits.enter(TARGET, 'p', 1)).toEqual({ kind: 'probe' });
    tick(10);
    expect((await circuits.leave(TARGET, 'p', 'succeeded', 10)).transition).toBe('closed');
  });
});

describe('an open circuit', () => {
  it('one probe per interval across every caller; only a 2xx closes it', async () => {
    const circuits = store({ probeIntervalMs: 200 });
    await warm(circuits);
    await open(circuits);
    for (let i = 0; i < 20; i++) await circuits.enter(TARGET, `job-${i}`, i);
    await probeDue(circuits);
    // The newest fresh job was first in line: it came back and took the probe.
    expect(await circuits.enter(TARGET, 'job-19', 19)).toEqual({ kind: 'probe' });
    expect(await circuits.enter(TARGET, 'job-18', 18)).toMatchObject({ kind: 'hold' });
    // A 404 to the probe's input ends that action; the circuit stays open, and the next in line
    // (the oldest fresh job, on the next turn) is woken for the next probe.
    const refused = await circuits.leave(TARGET, 'job-19', 'refused');
    expect(refused).toMatchObject({ state: 'open', transition: null, wake: { jobId: 'job-0' } });
    expect(await probe(circuits, 'job-0', 0, 'unavailable')).toMatchObject({
      state: 'open',
      transition: null,
      wake: { jobId: 'job-18' },
    });
    expect(await circuits.enter(TARGET, 'job-0', 0, true)).toMatchObject({ kind: 'hold' });
    expect(await probe(circuits, 'job-18', 18, 'succeeded')).toEqual({
      state: 'closed',
      transition: 'closed',
      failures: 0,
      wake: null,
      poison: false,
      judged: false,
      held: false,
    });
  });

  it('a probe is not taken before its interval, and is taken by any job once it is a whole interval overdue', async () => {
    const circuits = store({ probeIntervalMs: 1000, maxHoldMs: 90_000 });
    await warm(circuits);
    await open(circuits);
    expect((await circuits.enter(TARGET, 'first', 2)).kind).toBe('hold');
    expect(await circuits.enter(TARGET, 'other', 1)).toMatchObject({ kind: 'hold' });
    await probeDue(circuits);
    // Due, but another job is first in line (the newest fresh one).
    expect((await circuits.enter(TARGET, 'other', 1)).kind).toBe('hold');
    tick(1000);
    expect(await circuits.enter(TARGET, 'other', 1)).toEqual({ kind: 'probe' });
  });
});

describe('the line of held jobs', () => {
  it('the first in line comes back for the next probe; the others wait longer or until it closes', async () => {
    const circuits = store({ probeIntervalMs: 1000, maxHoldMs: 90_000 });
    await warm(circuits);
    await open(circuits);
    const first = await circuits.enter(TARGET, 'old', 1);
    expect(first.kind === 'hold' && first.delayMs).toBeLessThanOrEqual(1000);
    // The newer job is first now (the newest fresh job is the next probe): the older sleeps.
    const newer = await circuits.enter(TARGET, 'new', 2);
    expect(newer.kind === 'hold' && newer.delayMs).toBeLessThanOrEqual(1000);
    expect(await circuits.enter(TARGET, 'old', 1)).toEqual({
      kind: 'hold',
      delayMs: 90_000,
      newly: false,
    });
  });

  it('a job is held once: waking to look again is not a new hold', async () => {
    const circuits = store();
    await warm(circuits);
    await open(circuits);
    expect(await circuits.enter(TARGET, 'job', 1)).toMatchObject({ kind: 'hold', newly: true });
    expect(await circuits.enter(TARGET, 'job', 1)).toMatchObject({ kind: 'hold', newly: false });
  });

  it('probes take the newest and the oldest fresh job in turn, then the failed ones, poison last: a burst of held poison cannot stand ahead of an ordinary job', async () => {
    const circuits = store({ probeIntervalMs: 100, maxHoldMs: 90_000 });
    await warm(circuits);
    await open(circuits);
    // A burst of fresh jobs, then an ordinary one, then another burst.
    for (let i = 0; i < 50; i++) await circuits.enter(TARGET, `early-${i}`, 100 + i);
    await circuits.enter(TARGET, 'ordinary', 200);
    for (let i = 0; i < 50; i++) await circuits.enter(TARGET, `late-${i}`, 300 + i);
    const probes: string[] = [];
    let next = 'late-49';
    for (let i = 0; i < 4; i++) {
      const order = Number(/\d+$/.exec(next)?.[0] ?? 0) + (next.startsWith('late') ? 300 : 100);
      const departure = await probe(
        circuits,
        next,
        next === 'ordinary' ? 200 : order,
        'unavailable',
      );
      probes.push(next);
      await circuits.enter(TARGET, next, order, true);
      next = departure.wake!.jobId;
    }
    expect(probes).toEqual(['late-49', 'early-0', 'late-48', 'early-1']);
    // The failed go behind every fresh job, each failure to the back.
    const held = await circuits.held(TARGET);
    expect(held.slice(-4)).toEqual(probes);
  });
});

describe('waking the line', () => {
  it('closing wakes the fresh jobs newest first, then those that failed, poison last', async () => {
    const queue = new Queue('actions', { connection: t.redis, prefix: t.prefix });
    try {
      const circuits = store({ probeIntervalMs: 100 });
      await warm(circuits);
      // `poison` fails, the target serves another, `poison` fails again: poison.
      await circuits.leave(TARGET, 'poison', 'unavailable');
      tick(1);
      await circuits.leave(TARGET, 'other', 'succeeded');
      tick(1);
      expect(await circuits.leave(TARGET, 'poison', 'unavailable')).toMatchObject({
        poison: true,
        judged: true,
      });
      await open(circuits);
      await circuits.leave(TARGET, 'failed', 'unavailable');
      for (const [order, id] of [
        [3, 'third'],
        [1, 'first'],
        [2, 'second'],
      ] as const) {
        await queue.add('x', {}, { jobId: id, delay: 600_000 });
        expect((await circuits.enter(TARGET, id, order)).kind).toBe('hold');
      }
      for (const id of ['poison', 'failed']) {
        await queue.add('x', {}, { jobId: id, delay: 600_000 });
        expect((await circuits.enter(TARGET, id, 0, true)).kind).toBe('hold');
      }
      expect(await circuits.held(TARGET)).toEqual(['first', 'second', 'third', 'failed', 'poison']);
      expect(await circuits.override(TARGET, 'closed')).toBe('closed');
      expect(await circuits.wakeHeld(TARGET, queue)).toBe(5);
      // A worker taking one job at a time takes them in that order.
      const taken: string[] = [];
      const connection = t.redis.duplicate({ maxRetriesPerRequest: null });
      const worker = new Worker(
        'actions',
        (job) => {
          taken.push(job.id ?? '');
          return Promise.resolve();
        },
        { connection, prefix: t.prefix, concurrency: 1 },
      );
      await expect.poll(() => taken.length).toBe(5);
      await worker.close();
      connection.disconnect();
      expect(taken).toEqual(['third', 'second', 'first', 'failed', 'poison']);
      expect((await circuits.view(TARGET)).held_actions).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('a job removed by hand while first in line is passed over: the next one comes back for the probe', async () => {
    const queue = new Queue('actions', { connection: t.redis, prefix: t.prefix });
    try {
      const circuits = store({ probeIntervalMs: 1000, jobKeyPrefix: queue.toKey('') });
      await warm(circuits);
      await open(circuits);
      for (const id of ['next', 'gone']) await queue.add('x', {}, { jobId: id, delay: 600_000 });
      expect((await circuits.enter(TARGET, 'next', 1)).kind).toBe('hold');
      expect((await circuits.enter(TARGET, 'gone', 2)).kind).toBe('hold');
      await (await queue.getJob('gone'))!.remove();
      const next = await circuits.enter(TARGET, 'next', 1);
      expect(next.kind === 'hold' && next.delayMs).toBeLessThanOrEqual(1000);
      expect((await circuits.view(TARGET)).held_actions).toBe(1);
    } finally {
      await queue.close();
    }
  });
});

describe('after a close', () => {
  it("one call at a time until a 2xx, the first job woken's first; its failure is held (no count, no attempt spent) while the next call tells; another failure before any 2xx reopens it, and that job is held too", async () => {
    const circuits = store({ probeIntervalMs: 100 });
    await warm(circuits);
    await open(circuits);
    await circuits.enter(TARGET, 'prober', 1);
    expect((await probe(circuits, 'prober', 1, 'succeeded')).transition).toBe('closed');
    expect(await circuits.enter(TARGET, 'first', 2)).toEqual(TRACKED);
    expect(await circuits.enter(TARGET, 'second', 3)).toEqual({ kind: 'wait' });
    expect(await circuits.leave(TARGET, 'first', 'unavailable')).toMatchObject({
      state: 'closed',
      transition: null,
      held: true,
    });
    // Held an interval, while the next call tells.
    expect(await circuits.enter(TARGET, 'first', 2, true)).toEqual({
      kind: 'hold',
      delayMs: 100,
      newly: true,
    });
    expect(await circuits.enter(TARGET, 'second', 3)).toEqual(TRACKED);
    expect(await circuits.leave(TARGET, 'second', 'unavailable')).toMatchObject({
      state: 'open',
      transition: 'reopened',
      held: false,
    });
    expect(await t.redis.hget(`${t.prefix}:circuit:${TARGET}`, 'reason')).toBe('reopened');
    expect((await circuits.enter(TARGET, 'second', 3, true)).kind).toBe('hold');
    // Closed again: the first call is the first job woken's (`second`, the one held), whichever
    // job comes first; it gets a 2xx: clean, calls go out untracked.
    await circuits.enter(TARGET, 'third', 4);
    expect((await probe(circuits, 'third', 4, 'succeeded')).transition).toBe('closed');
    expect(await circuits.enter(TARGET, 'fourth', 5)).toEqual({ kind: 'wait' });
    expect(await circuits.enter(TARGET, 'second', 3)).toEqual(TRACKED);
    expect(await circuits.leave(TARGET, 'second', 'succeeded')).toMatchObject({ state: 'closed' });
    expect(await circuits.enter(TARGET, 'fifth', 6)).toEqual(CLEAN);
  });
});

describe('a poison input: it fails while the target serves others', () => {
  it('judged at its failure after a 2xx to another since its last: its failures no longer count, and it spends its attempts (the circuit stays closed)', async () => {
    const circuits = store();
    await warm(circuits);
    expect(await circuits.leave(TARGET, 'poison', 'unavailable')).toMatchObject({
      failures: 1,
      poison: false,
    });
    tick(1);
    await circuits.leave(TARGET, 'other', 'succeeded');
    for (let i = 0; i < 10; i++) {
      tick(1);
      expect(await circuits.leave(TARGET, 'poison', 'unavailable')).toMatchObject({
        state: 'closed',
        failures: 0,
        poison: true,
        judged: i === 0,
      });
    }
    expect(await t.redis.zrange(`${t.prefix}:circuit:${TARGET}:poison`, '0', '-1')).toEqual([
      'poison',
    ]);
    // Its 2xx forgets it.
    await circuits.leave(TARGET, 'poison', 'succeeded');
    expect(await t.redis.zcard(`${t.prefix}:circuit:${TARGET}:poison`)).toBe(0);
  });

  it('in an outage (no 2xx since its failure) a held job is never judged poison, however many of its probes fail', async () => {
    const circuits = store({ probeIntervalMs: 50 });
    await warm(circuits);
    await circuits.leave(TARGET, 'only', 'unavailable');
    await open(circuits);
    for (let i = 0; i < 5; i++) {
      await circuits.enter(TARGET, 'only', 1, true);
      // Alone in the line: nobody else to wake, it comes back for the next probe itself.
      expect(await probe(circuits, 'only', 1, 'unavailable')).toMatchObject({
        wake: null,
        poison: false,
      });
    }
  });
});

describe('a poison input while the circuit is open or recovering', () => {
  it('a poison input held by a circuit that opens for others stays held: no attempt spent while open', async () => {
    const circuits = store();
    await warm(circuits);
    await circuits.leave(TARGET, 'poison', 'unavailable');
    tick(1);
    await circuits.leave(TARGET, 'other', 'succeeded');
    tick(1);
    await circuits.leave(TARGET, 'poison', 'unavailable');
    await open(circuits);
    tick(1);
    // It fails again (an in-flight call) while open: the state says open, so its job is held.
    expect(await circuits.leave(TARGET, 'poison', 'unavailable')).toMatchObject({
      state: 'open',
      poison: true,
      judged: false,
    });
  });

  it("right after a close, one input's failure followed by a 2xx to another is that input's: at its next failure it is poison, and the circuit stays closed", async () => {
    const circuits = store({ probeIntervalMs: 100 });
    const poisonSet = `${t.prefix}:circuit:${TARGET}:poison`;
    await warm(circuits);
    await open(circuits);
    await circuits.enter(TARGET, 'wh_p.a', 1);
    await circuits.enter(TARGET, 'wh_o.a', 2);
    expect((await probe(circuits, 'wh_o.a', 2, 'succeeded')).transition).toBe('closed');
    await circuits.enter(TARGET, 'wh_p.a', 1);
    tick(1);
    expect(await circuits.leave(TARGET, 'wh_p.a', 'unavailable')).toMatchObject({
      state: 'closed',
      held: true,
      poison: false,
    });
    expect(await circuits.enter(TARGET, 'wh_q.a', 3)).toEqual(TRACKED);
    tick(1);
    expect(await circuits.leave(TARGET, 'wh_q.a', 'succeeded')).toMatchObject({ state: 'closed' });
    tick(1);
    expect(await circuits.leave(TARGET, 'wh_p.a', 'unavailable')).toMatchObject({
      state: 'closed',
      poison: true,
      judged: true,
    });
    expect(await t.redis.zrange(poisonSet, '0', '-1')).toEqual(['wh_p.a']);
  });
});

describe("a job's failures against a target", () => {
  it("a webhook's failures are kept a day after its last; its jobs leave the poison list at a 2xx, a refusal or when forgotten", async () => {
    const circuits = store();
    const poisonSet = `${t.prefix}:circuit:${TARGET}:poison`;
    await warm(circuits);
    for (const job of ['wh_a.notify', 'wh_a.lock', 'wh_a.notify']) {
      await circuits.leave(TARGET, job, 'unavailable');
      tick(1);
    }
    const ttl = await t.redis.pttl(`${t.prefix}:circuit:${TARGET}:failing:wh_a`);
    expect(ttl).toBeGreaterThan(86_000_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
    // Two inputs (a job failing twice counts once): not yet the threshold.
    expect(await circuits.view(TARGET)).toMatchObject({ state: 'closed', consecutive_failures: 2 });
    await circuits.leave(TARGET, 'wh_b.notify', 'succeeded');
    // The webhook failed, the target served another since: each of its actions is poison, its
    // third too, at its first failure.
    for (const job of ['wh_a.notify', 'wh_a.lock', 'wh_a.update']) {
      tick(1);
      expect(await circuits.leave(TARGET, job, 'unavailable')).toMatchObject({
        state: 'closed',
        poison: true,
      });
    }
    expect(await t.redis.zcard(poisonSet)).toBe(3);
    await circuits.leave(TARGET, 'wh_a.notify', 'succeeded');
    await circuits.leave(TARGET, 'wh_a.lock', 'refused');
    await circuits.forget(TARGET, 'wh_a.update');
    expect(await t.redis.zcard(poisonSet)).toBe(0);
  });
});

describe('an operator and the circuit', () => {
  it('an operator can open a circuit (no probes until closed by hand) and close it', async () => {
    const circuits = store({ probeIntervalMs: 50 });
    await warm(circuits);
    expect(await circuits.override(TARGET, 'open')).toBe('opened');
    expect(await circuits.override(TARGET, 'open')).toBeNull();
    const view = await circuits.view(TARGET);
    expect(view).toMatchObject({ state: 'open', manual: true, next_probe_at: null });
    expect(await t.redis.hget(`${t.prefix}:circuit:${TARGET}`, 'reason')).toBe('manual');
    tick(120);
    expect((await circuits.enter(TARGET, 'job', 1)).kind).toBe('hold');
    // A 2xx to a call that was in flight does not close a circuit opened by hand.
    expect((await circuits.leave(TARGET, 'in-flight', 'succeeded')).state).toBe('open');
    expect(await circuits.override(TARGET, 'closed')).toBe('closed');
    // Closed by hand, the target is suspect until it serves again.
    expect(await circuits.enter(TARGET, 'job', 1)).toEqual(TRACKED);
  });
});

describe('held jobs of several partitions', () => {
  it('with partitions, a job removed by hand is passed over as well, though its key is in another slot', async () => {
    const partitions = new Partitions(t.prefix, 2);
    const queues = new ActionQueues(t.redis, partitions);
    try {
      const circuits = store({
        probeIntervalMs: 100,
        maxHoldMs: 90_000,
        jobKeyPrefix: (jobId) => queues.ofJob(jobId).toKey(jobId),
      });
      await warm(circuits);
      await open(circuits);
      const [gone, next, last] = [0, 1, 0].map((partition) =>
        actionJobId(partitions.newWebhookId(partition), 'notify_customer'),
      ) as [string, string, string];
      for (const id of [gone, next, last]) {
        await addDelayed(queues, id);
      }
      // The newest fresh job is first in line: `gone`, until it is removed.
      expect((await circuits.enter(TARGET, gone, 3)).kind).toBe('hold');
      await (await queues.ofJob(gone).getJob(gone))!.remove();
      const second = await circuits.enter(TARGET, next, 2);
      expect(second.kind === 'hold' && second.delayMs).toBeLessThan(90_000);
      expect(await circuits.held(TARGET)).toEqual([next]);
      // After a failed probe, a job removed by hand is not the one named to be woken.
      expect((await circuits.enter(TARGET, last, 1)).kind).toBe('hold');
      await (await queues.ofJob(last).getJob(last))!.remove();
      await probeDue(circuits);
      expect(await circuits.enter(TARGET, next, 2)).toEqual({ kind: 'probe' });
      expect((await circuits.leave(TARGET, next, 'unavailable')).wake).toBeNull();
      expect(await circuits.held(TARGET)).toEqual([next]);
    } finally {
      await queues.close();
    }
  });

  it('closing wakes the held jobs of every partition', async () => {
    const partitions = new Partitions(t.prefix, 2);
    const queues = new ActionQueues(t.redis, partitions);
    try {
      const circuits = store();
      await warm(circuits);
      await open(circuits);
      const ids = [0, 1].map((partition) =>
        actionJobId(partitions.newWebhookId(partition), 'notify_customer'),
      );
      for (const [order, id] of ids.entries()) {
        await addDelayed(queues, id);
        expect((await circuits.enter(TARGET, id, order)).kind).toBe('hold');
      }
      expect(await circuits.override(TARGET, 'closed')).toBe('closed');
      expect(await circuits.wakeHeld(TARGET, (id) => queues.ofJob(id))).toBe(2);
      for (const [partition, id] of ids.entries()) {
        expect(await queues.partition(partition).getJobState(id)).toBe('waiting');
      }
    } finally {
      await queues.close();
    }
  });
});
