import fc from 'fast-check';
import type { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { redisPerTest } from '@pw/test-utils';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import type { Admission, CallResult } from '../src/circuit-breaker.js';
import { holdsAfterFailure, reportsAnswer } from '../src/circuit-gate.js';

// A model-based test of the circuit breaker: its own code (the scripts, in a real Redis, on a
// clock the test moves) driven by a small model of the worker (each job asks before its call,
// reports after it, is held or spends an attempt as the processor decides) through generated
// sequences of target states and inputs. The promises of the breaker
// (docs/reliability-and-security.md#outages-the-circuit-breaker) are asserted on every run.

const THRESHOLD = 4;
const INTERVAL = 1000;
const ATTEMPTS = 4;
const BACKOFF = 300;
const SLOW_MS = 400;
const t = redisPerTest();

type TargetState = 'up' | 'down' | 'flapping' | 'slow';
type Kind = 'ordinary' | 'poison5xx' | 'poison4xx' | 'limited429';
interface Segment {
  state: TargetState;
  ms: number;
}
interface Arrival {
  at: number;
  kind: Kind;
  actions: number;
}

interface Job {
  id: string;
  kind: Kind;
  order: number;
  readyAt: number;
  spent: number;
  /** Attempts spent on failures while the target was down. */
  spentInOutage: number;
  calls: number;
  end: 'completed' | 'dead' | null;
  endedAt: number;
}

interface Call {
  at: number;
  /** When its answer came. */
  answeredAt: number;
  job: Job;
  result: CallResult;
}

/** A call whose answer comes later (`at`): sent at `sentAt`. */
interface Flight {
  job: Job;
  admission: Admission;
  result: CallResult;
  at: number;
  sentAt: number;
}

/** The target's state at `at`: the segments, then up for good. */
function stateAt(segments: Segment[], at: number): TargetState {
  let start = 0;
  for (const segment of segments) {
    if (at < start + segment.ms) return segment.state;
    start += segment.ms;
  }
  return 'up';
}

/** How the target answers a call of `job` at `at`, and how long it takes. */
function answer(job: Job, state: TargetState, at: number): { result: CallResult; ms: number } {
  // A front that refuses one odd input answers so even while the service behind it is down.
  if (job.kind === 'poison4xx') return { result: 'refused', ms: 0 };
  const up = state === 'up' || state === 'slow' || (state === 'flapping' && at % 4000 < 2000);
  if (!up || job.kind === 'poison5xx') return { result: 'unavailable', ms: 0 };
  // An input the partner rate-limits (429 with Retry-After) twice, then serves.
  if (job.kind === 'limited429' && job.calls < 2) return { result: 'unavailable', ms: 0 };
  return { result: 'succeeded', ms: state === 'slow' ? SLOW_MS : 0 };
}

/**
 * The jobs of a run: the generated arrivals; while the target is down or flapping, an ordinary
 * webhook every 250 ms besides (the partner platform goes on sending, so an outage is seen across
 * inputs: one input alone never opens a circuit); after the generated part, the target serves
 * for good and ordinary traffic goes on, every 500 ms for 30 s.
 */
function jobsOf(segments: Segment[], arrivals: Arrival[], start: number, outageEnd: number) {
  const ordinary = (at: number): Arrival => ({ at, kind: 'ordinary', actions: 1 });
  const meanwhile: Arrival[] = [];
  let from = 0;
  for (const { state, ms } of segments) {
    if (state === 'down' || state === 'flapping') {
      for (let at = from; at < from + ms; at += 250) meanwhile.push(ordinary(at));
    }
    from += ms;
  }
  const drain = Array.from({ length: 60 }, (_, i) => ordinary(outageEnd + 500 * i));
  const jobs: Job[] = [];
  for (const [n, arrival] of [...arrivals, ...meanwhile, ...drain].entries()) {
    for (let a = 0; a < arrival.actions; a++) {
      const at = start + arrival.at;
      jobs.push({
        ...{ id: `wh_${n}.a${a}`, kind: arrival.kind, order: at, readyAt: at },
        ...{ spent: 0, calls: 0, end: null, endedAt: 0, spentInOutage: 0 },
      });
    }
  }
  return jobs;
}

/** The breaker under test, on the model's clock, with no jitter. */
const modelBreaker = (clock: () => number) =>
  new CircuitBreaker(
    t.redis,
    {
      ...{ queuePrefix: t.prefix, failureThreshold: THRESHOLD, probeIntervalMs: INTERVAL },
      ...{ leaseMs: 30_000, maxHoldMs: 10 * INTERVAL, clock },
    },
    () => 0,
  );

/**
 * A queue for the real `wakeHeld`, whose jobs are the model's: taken in the order woken (a
 * millisecond apart), as BullMQ's waiting list is.
 */
function modelQueue(wake: (id: string, at: number) => void, now: () => number): Queue {
  let woken = 0;
  const promote = (id: string) => () => Promise.resolve(wake(id, now() + (++woken % 1000)));
  const delayed = () => Promise.resolve(true);
  const getJob = (id: string) => Promise.resolve({ isDelayed: delayed, promote: promote(id) });
  return { getJob } as unknown as Queue;
}

/** Runs the model: the breaker's promises are asserted on what it did. */
async function run(segments: Segment[], arrivals: Arrival[], runId: number) {
  let now = 1_800_000_000_000;
  const start = now;
  const target = `model-${runId}`;
  const breaker = modelBreaker(() => now);
  const outageEnd = segments.reduce((sum, segment) => sum + segment.ms, 0);
  const jobs = jobsOf(segments, arrivals, start, outageEnd);
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const calls: Call[] = [];
  const inFlight: Flight[] = [];
  const wake = (id: string, at: number) => {
    const job = byId.get(id);
    if (job && !job.end) job.readyAt = Math.min(job.readyAt, at);
  };
  const queue = modelQueue(wake, () => now);
  const end = (job: Job, how: 'completed' | 'dead') =>
    Object.assign(job, { end: how, endedAt: now });
  // Held for its delay; waiting for room in flight, back in 100 ms.
  const hold = (job: Job, admission: Admission) => {
    if (admission.kind !== 'hold') return void (job.readyAt = now + 100);
    job.readyAt = now + admission.delayMs;
    if (admission.wake) wake(admission.wake.jobId, now + admission.wake.inMs);
  };
  // The processor tells the circuit how long ago a call that got its 2xx was sent.
  const settle = async (job: Job, admission: Admission, result: CallResult, sentAt = now) => {
    if (result === 'succeeded' || result === 'refused') {
      if (reportsAnswer(admission)) {
        const after = await breaker.leave(target, job.id, result, now - sentAt);
        if (after.transition === 'closed') await breaker.wakeHeld(target, queue);
        if (after.wake) wake(after.wake.jobId, now + after.wake.inMs);
      }
      if (result === 'refused') await breaker.forget(target, job.id);
      return end(job, result === 'succeeded' ? 'completed' : 'dead');
    }
    const after = await breaker.leave(target, job.id, result);
    if (after.wake) wake(after.wake.jobId, now + after.wake.inMs);
    if (holdsAfterFailure(result, after))
      return hold(job, await breaker.enter(target, job.id, job.order, true));
    job.spent++;
    if (stateAt(segments, now - start) === 'down') job.spentInOutage++;
    if (job.spent >= ATTEMPTS) {
      await breaker.forget(target, job.id);
      return end(job, 'dead');
    }
    job.readyAt = now + (job.kind === 'limited429' ? 1000 : BACKOFF);
  };

  const limit = start + outageEnd + 60_000;
  while (now < limit && jobs.some((job) => !job.end)) {
    const next = Math.min(
      ...jobs
        .filter((job) => !job.end && !inFlight.some((f) => f.job === job))
        .map((job) => job.readyAt),
      ...inFlight.map((f) => f.at),
    );
    now = Math.max(now, next);
    for (const flight of inFlight.filter((f) => f.at <= now)) {
      inFlight.splice(inFlight.indexOf(flight), 1);
      await settle(flight.job, flight.admission, flight.result, flight.sentAt);
    }
    for (const job of jobs.filter((j) => !j.end && j.readyAt <= now)) {
      if (inFlight.some((f) => f.job === job)) continue;
      const admission = await breaker.enter(target, job.id, job.order);
      if (admission.kind === 'wait' || admission.kind === 'hold') {
        hold(job, admission);
        continue;
      }
      const { result, ms } = answer(job, stateAt(segments, now - start), now - start);
      job.calls++;
      calls.push({ at: now - start, answeredAt: now - start + ms, job, result });
      if (ms > 0) inFlight.push({ job, admission, result, at: now + ms, sentAt: now });
      else await settle(job, admission, result);
    }
  }
  return { jobs, calls, start, outageEnd };
}

const segment = fc.record({
  state: fc.constantFrom<TargetState>('up', 'down', 'flapping', 'slow'),
  ms: fc.integer({ min: 1, max: 12 }).map((n) => n * 1000),
});
const arrival = fc.record({
  at: fc.integer({ min: 0, max: 60 }).map((n) => n * 250),
  kind: fc.constantFrom<Kind>('ordinary', 'ordinary', 'poison5xx', 'poison4xx', 'limited429'),
  actions: fc.integer({ min: 1, max: 3 }),
});

describe('the circuit breaker, driven through generated outages and inputs', () => {
  it('keeps every promise: no ordinary dead letter, calls bounded in an outage, ordinary actions done soon once served, poison dead with its attempts spent', async () => {
    let runId = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.array(arrival, { minLength: 1, maxLength: 25 }),
        async (segments, arrivals) => {
          const { jobs, calls, start, outageEnd } = await run(segments, arrivals, runId++);
          for (const job of jobs) {
            const label = `${job.id} ${job.kind}`;
            if (job.kind === 'ordinary' || job.kind === 'limited429') {
              // An outage of any length ends in completed actions, not dead letters: an action
              // may spend attempts while its target flaps, never all of them while it is down.
              if (job.end === 'dead') expect(job.spentInOutage, label).toBeLessThan(ATTEMPTS);
              else expect(job.end, label).toBe('completed');
              // Once the target serves for good, an ordinary action waits a few intervals at most
              // (a rate-limited one its two Retry-After waits besides).
              const servedFrom = Math.max(job.order - start, outageEnd);
              const bound = (job.kind === 'ordinary' ? 10 : 15) * INTERVAL;
              expect(job.endedAt - start - servedFrom, label).toBeLessThanOrEqual(bound);
            } else if (job.kind === 'poison5xx') {
              expect(job.end, label).toBe('dead');
              expect(job.spent, label).toBe(ATTEMPTS);
            } else {
              expect(job.end, label).toBe('dead');
              expect(job.calls, label).toBe(1);
            }
          }
          // While the target is down, the partner sees the threshold and one probe per interval,
          // besides calls that end an action, and two a clean circuit lets through before it
          // counts: a known poison input's failure (it makes the target suspect) and one input's
          // first repeat failure after a 2xx (judged poison: at most one per 2xx). A 2xx that
          // comes late, to a call sent before the outage's failures, changes nothing.
          let from = 0;
          for (const { state, ms } of segments) {
            if (state === 'down') {
              const within = (at: number) => at >= from && at < from + ms;
              const during = calls.filter((call) => within(call.at) && call.result !== 'refused');
              const bound = THRESHOLD + 3 + Math.ceil(ms / INTERVAL);
              expect(during.length).toBeLessThanOrEqual(bound);
            }
            from += ms;
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});
