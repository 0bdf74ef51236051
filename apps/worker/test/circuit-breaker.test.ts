import { Queue, Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { actionJobId, Partitions } from '@pw/shared';
import { redisPerTest } from '@pw/test-utils';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { ActionQueues, webhookIdOfJob } from '@pw/shared';
import type { CircuitBreakerSettings } from '../src/circuit-breaker.js';

// The circuit breaker (lua/circuit-enter-5.lua, lua/circuit-leave-5.lua): the shared circuit
// state in Redis, driven as several workers would drive it.

const TARGET = 'http://partner.test v1/webhooks';
const t = redisPerTest();

const store = (settings: Partial<CircuitBreakerSettings> = {}) =>
  new CircuitBreaker(t.redis, {
    queuePrefix: t.prefix,
    failureThreshold: 3,
    probeIntervalMs: 60_000,
    leaseMs: 30_000,
    ...settings,
  });

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

/** Calls that get an answer, so the target is known to answer (not suspect). */
async function warm(circuits: CircuitBreaker) {
  expect(await circuits.enter(TARGET, 'warm', 1)).toEqual({ kind: 'call', tracked: true });
  await circuits.leave(TARGET, 'warm', 'answered');
  expect(await circuits.enter(TARGET, 'warm-2', 1)).toEqual({ kind: 'call', tracked: false });
}

/** Waits until the circuit's next probe is due on Redis's clock. */
async function probeDue(circuits: CircuitBreaker) {
  const [seconds, micros] = await t.redis.time();
  const due = Date.parse((await circuits.view(TARGET)).next_probe_at ?? '');
  const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - redisNow + 5)));
}

describe('circuit state shared through Redis: opening', () => {
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
      wake: null,
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
});

describe('an open circuit', () => {
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
      wake: null,
    });
    expect(await circuits.enter(TARGET, 'job-2', 2)).toEqual({ kind: 'call', tracked: false });
  });
});

describe('the jobs an open circuit holds', () => {
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
    const queue = new Queue('actions', { connection: t.redis, prefix: t.prefix });
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
    const queue = new Queue('actions', { connection: t.redis, prefix: t.prefix });
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
      const connection = t.redis.duplicate({ maxRetriesPerRequest: null });
      const worker = new Worker(
        'actions',
        (job) => {
          taken.push(job.id ?? '');
          return Promise.resolve();
        },
        { connection, prefix: t.prefix, concurrency: 1 },
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
});

describe('an operator and the circuit', () => {
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

/** Redis's clock in ms. */
async function redisMs() {
  const [seconds, micros] = await t.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Returns once Redis's clock is a millisecond on: what happens next happens later. */
async function nextMillisecond() {
  const start = await redisMs();
  while ((await redisMs()) === start);
}

/** Opens the circuit with `threshold` failures of calls no job waits for. */
async function open(circuits: CircuitBreaker, threshold = 3) {
  for (let i = 0; i < threshold; i++) await circuits.leave(TARGET, `opener-${i}`, 'unavailable');
  expect((await circuits.view(TARGET)).state).toBe('open');
}

/** The job's probe, once due; it fails. */
async function failedProbe(circuits: CircuitBreaker, jobId: string, order: number) {
  await probeDue(circuits);
  expect(await circuits.enter(TARGET, jobId, order)).toEqual({ kind: 'probe' });
  return circuits.leave(TARGET, jobId, 'unavailable');
}

describe('a poison input cannot hold a circuit open', () => {
  it('probes go round the held jobs: one whose probe failed goes to the back, and the one now first is named to be woken for the next probe', async () => {
    const circuits = store({ probeIntervalMs: 100, maxHoldMs: 90_000 });
    await warm(circuits);
    await open(circuits);
    const t = Date.now();
    for (const [i, id] of ['first', 'second', 'third'].entries()) {
      expect((await circuits.enter(TARGET, id, t + i)).kind).toBe('hold');
    }
    const departure = await failedProbe(circuits, 'first', t);
    // Held again (its call just failed): at the back, so it sleeps the long hold.
    expect(await circuits.enter(TARGET, 'first', t, true)).toMatchObject({
      kind: 'hold',
      delayMs: 90_000,
    });
    expect(await circuits.held(TARGET)).toEqual(['second', 'third', 'first']);
    expect(departure).toMatchObject({ state: 'open', wake: { jobId: 'second' } });
    expect(departure.wake?.inMs).toBeGreaterThanOrEqual(100);
    expect((await failedProbe(circuits, 'second', t + 1)).wake?.jobId).toBe('third');
    expect(await circuits.held(TARGET)).toEqual(['third', 'first', 'second']);
    // A job that failed lately joins at the back, even behind a job created after it.
    await circuits.leave(TARGET, 'retried', 'unavailable');
    // Created after every place in the line, which is max(now, the last's + 1): past t + 5 when
    // all of the above ran within a millisecond or two, and past any earlier now.
    while ((await redisMs()) <= t + 5);
    await nextMillisecond();
    expect((await circuits.enter(TARGET, 'new', Date.now())).kind).toBe('hold');
    expect((await circuits.enter(TARGET, 'retried', t - 1)).kind).toBe('hold');
    expect(await circuits.held(TARGET)).toEqual(['third', 'first', 'second', 'new', 'retried']);
  });

  it('a job whose probe failed 3 times while the target answered others is released: it calls, its failures leave the probes alone, its answer closes the circuit', async () => {
    const circuits = store({ probeIntervalMs: 100 });
    await warm(circuits);
    // The poison fails, then the target answers another job: the failure is the poison's own.
    await circuits.leave(TARGET, 'poison', 'unavailable');
    await nextMillisecond();
    await circuits.leave(TARGET, 'other', 'answered');
    await open(circuits);
    expect((await circuits.enter(TARGET, 'healthy', 9)).kind).toBe('hold');
    for (const counted of [1, 2]) {
      await failedProbe(circuits, 'poison', 1);
      expect(await circuits.failedProbes(TARGET, 'poison')).toBe(counted);
      expect((await circuits.enter(TARGET, 'poison', 1, true)).kind).toBe('hold');
    }
    expect((await failedProbe(circuits, 'poison', 1)).wake?.jobId).toBe('healthy');
    expect(await circuits.enter(TARGET, 'poison', 1, true)).toEqual({ kind: 'released' });
    expect(await circuits.held(TARGET)).toEqual(['healthy']);

    // Released, it calls whenever it runs, never as the probe: the probe is still the others'.
    await probeDue(circuits);
    expect(await circuits.enter(TARGET, 'poison', 1)).toEqual({ kind: 'released' });
    const due = (await circuits.view(TARGET)).next_probe_at;
    expect(await circuits.leave(TARGET, 'poison', 'unavailable')).toMatchObject({ state: 'open' });
    expect((await circuits.view(TARGET)).next_probe_at).toBe(due);
    expect(await circuits.enter(TARGET, 'healthy', 9)).toEqual({ kind: 'probe' });
    await circuits.leave(TARGET, 'healthy', 'neutral');

    // An operator's open holds it like any other job.
    await circuits.override(TARGET, 'open');
    expect((await circuits.enter(TARGET, 'poison', 1)).kind).toBe('hold');
    await circuits.override(TARGET, 'closed');
    await open(circuits);
    // Its answer is the target's: the circuit closes, and its failures are forgotten.
    expect(await circuits.enter(TARGET, 'poison', 1)).toEqual({ kind: 'released' });
    expect(await circuits.leave(TARGET, 'poison', 'answered')).toMatchObject({
      transition: 'closed',
    });
    expect(await circuits.failedProbes(TARGET, 'poison')).toBe(0);
  });
});

describe('a poison input is told from an outage', () => {
  it('in an outage (nothing answered since its first failure) a held job is never released, however many of its probes fail', async () => {
    const circuits = store({ probeIntervalMs: 50 });
    await warm(circuits);
    await open(circuits);
    for (let i = 0; i < 5; i++) {
      // Alone in the line: nobody else to wake, it comes back for the next probe itself.
      expect((await failedProbe(circuits, 'only', 1)).wake).toBeNull();
      const again = await circuits.enter(TARGET, 'only', 1, true);
      expect(again.kind === 'hold' && again.delayMs).toBeLessThanOrEqual(70);
    }
    expect(await circuits.failedProbes(TARGET, 'only')).toBe(0);
  });

  it("a job's failures are kept a day after its last, and forgotten once it is answered or forgotten", async () => {
    const circuits = store();
    const failing = (job: string) => `${t.prefix}:circuit:${TARGET}:failing:${job}`;
    for (const job of ['answered', 'skipped']) {
      await circuits.leave(TARGET, job, 'unavailable');
      const ttl = await t.redis.pttl(failing(job));
      expect(ttl).toBeGreaterThan(86_000_000);
      expect(ttl).toBeLessThanOrEqual(86_400_000);
    }
    await circuits.leave(TARGET, 'answered', 'answered');
    await circuits.forget(TARGET, 'skipped');
    expect(await t.redis.exists(failing('answered'), failing('skipped'))).toBe(0);
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
      for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
      const [gone, next, last] = [0, 1, 0].map((partition) =>
        actionJobId(partitions.newWebhookId(partition), 'notify_customer'),
      ) as [string, string, string];
      for (const id of [gone, next, last]) {
        await addDelayed(queues, id);
      }
      expect((await circuits.enter(TARGET, gone, 1)).kind).toBe('hold');
      await (await queues.ofJob(gone).getJob(gone))!.remove();
      const second = await circuits.enter(TARGET, next, 2);
      expect(second.kind === 'hold' && second.delayMs).toBeLessThan(90_000);
      expect(await circuits.held(TARGET)).toEqual([next]);
      // After a failed probe, a job removed by hand is not the one named to be woken.
      expect((await circuits.enter(TARGET, last, 3)).kind).toBe('hold');
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
      for (const id of ['a', 'b', 'c']) await circuits.leave(TARGET, id, 'unavailable');
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
