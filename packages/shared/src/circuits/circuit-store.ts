import type { Queue } from 'bullmq';
import { invalidArgument } from '../errors.js';
import { withCommand } from '../redis.js';
import type { RedisClient } from '../redis.js';
import { ENTER, LEAVE, OVERRIDE } from './circuit-scripts.js';

// The circuit breaker (docs/reliability-and-security.md, "Outages: the circuit breaker"), kept in
// Redis so every worker process shares it. One hash per partner target
// (`{prefix}:circuit:{target}`): `state` (closed, open), `failures` (consecutive retryable
// failures), `since`, `next_probe_at`, `probe_job` and `probe_until` (the probe in flight),
// `manual` (opened by an operator), `warm` (the target answered since its last failure),
// `answered_at` (its last answer reported); a sorted set of the jobs it holds, in their order (a
// job whose call or probe failed goes to the back); a sorted set of the calls in flight while the
// target is suspect; a hash per job that failed (`first_failure_at`, `failed_probes`: those
// counted towards its release), kept a day after its last failure; and one set naming every
// target. Times are Redis's clock.

export type CircuitState = 'closed' | 'open';

/** What a job does about the circuit before its call. */
export type Admission =
  /** Call; `tracked`: the call holds an in-flight lease (`leave` must follow). */
  | { kind: 'call'; tracked: boolean }
  /** Call: this is the one probe of the interval. */
  | { kind: 'probe' }
  /**
   * Call, though the circuit is open: the job's probe failed `RELEASED_AFTER_FAILED_PROBES` times
   * while the target answered others (a poison input), so it is no longer held and spends its
   * attempts (`leave` must follow: an answer closes the circuit; a failure leaves the probes
   * alone).
   */
  | { kind: 'released' }
  /** The target is suspect and enough calls are in flight: try again in a moment (not held). */
  | { kind: 'wait' }
  /**
   * The circuit is open: hold the job for `delayMs` (or until the circuit closes); `newly`: it was
   * not held already (a job woken to look again is not newly held).
   */
  | { kind: 'hold'; delayMs: number; newly: boolean };

/** How a call went, as far as the circuit is concerned. */
export type CallResult =
  /** The target answered (2xx, or a 4xx that is not 408 or 429). */
  | 'answered'
  /** A retryable failure of the target: a network error, 408, 429, 5xx, its IdP unreachable. */
  | 'unavailable'
  /** Neither (no call was made, an unexpected error): only the lease is given back. */
  | 'neutral';

/** What `leave` did to the circuit. */
export interface Departure {
  /** The circuit's state after the call. */
  state: CircuitState;
  /** Set when this call moved the circuit. */
  transition: 'opened' | 'closed' | null;
  failures: number;
  /**
   * After a failed probe: the job now first in line, asleep for a long hold, to be woken for the
   * next probe `inMs` from now.
   */
  wake: { jobId: string; inMs: number } | null;
}

/** One circuit, as the operator API shows it. */
export interface CircuitView {
  target: string;
  state: CircuitState;
  /** When it last changed state (ISO), or null if it never did. */
  since: string | null;
  consecutive_failures: number;
  held_actions: number;
  /** True when an operator opened it: no probes until an operator closes it. */
  manual: boolean;
  next_probe_at: string | null;
}

export interface CircuitSettings {
  queuePrefix: string;
  /** Consecutive retryable failures that open a circuit (`CIRCUIT_FAILURE_THRESHOLD`). */
  failureThreshold: number;
  /** Time between probes of an open circuit (`CIRCUIT_PROBE_INTERVAL_MS`). */
  probeIntervalMs: number;
  /** How long a call may hold its in-flight lease or the probe before it counts as gone. */
  leaseMs: number;
  /**
   * The key prefix of the held jobs (BullMQ's `queue.toKey('')`), so a job removed by hand while
   * first in line is passed over; without it, the next probe waits for a job that does not come.
   */
  jobKeyPrefix?: string;
  /**
   * How long a held job waits before it looks again, unless it is the first in line (which comes
   * back for the next probe) or the circuit closes first (which wakes them all).
   * @defaultValue 10 probe intervals, at least a minute
   */
  maxHoldMs?: number;
  /**
   * How long a job's failures (its first, its failed probes) are kept after its last; an answer
   * to it reported to the circuit, its skip or its failing for good forgets them at once (an
   * answer on a healthy target is not reported). Forgotten early, a poison input is only held a
   * little longer.
   * @defaultValue one day
   */
  jobFailuresKeptMs?: number;
}

/** The reply of `circuitEnter`: {kind, n, newly}. */
export type EnterReply = [string, number, number?];

/** What `circuitEnter`'s reply means. */
export function admissionOf([kind, n, newly]: EnterReply): Admission {
  if (kind === 'call') return { kind, tracked: n === 1 };
  if (kind === 'probe' || kind === 'wait' || kind === 'released') return { kind };
  return { kind: 'hold', delayMs: n, newly: newly === 1 };
}

interface CircuitCommands {
  pwCircuitEnter(...args: (string | number)[]): Promise<EnterReply>;
  pwCircuitLeave(
    ...args: (string | number)[]
  ): Promise<[CircuitState, string, number, string?, number?]>;
  pwCircuitOverride(...args: string[]): Promise<string>;
}

/** How long a job's failures are kept by default (`jobFailuresKeptMs`). */
const DAY_MS = 86_400_000;

/**
 * A jittered probe interval, so workers do not probe in step: up to 40% longer, never shorter (at
 * most one probe per interval).
 */
const jittered = (intervalMs: number, random: () => number) =>
  Math.round(intervalMs * (1 + 0.4 * random()));

/** The circuits of every partner target, shared through Redis. */
export class CircuitStore {
  private readonly redis: RedisClient & CircuitCommands;

  constructor(
    redis: RedisClient,
    private readonly settings: CircuitSettings,
    private readonly random: () => number = Math.random,
  ) {
    if (settings.failureThreshold < 1 || settings.probeIntervalMs < 1) {
      throw invalidArgument('a circuit needs a threshold and a probe interval of at least 1');
    }
    const client = withCommand<CircuitCommands>(redis, ENTER);
    withCommand(client, LEAVE);
    this.redis = withCommand<CircuitCommands>(client, OVERRIDE);
  }

  private key(target: string, part = ''): string {
    return `${this.settings.queuePrefix}:circuit:${target}${part}`;
  }

  private get targetsKey(): string {
    return `${this.settings.queuePrefix}:circuits`;
  }

  /** Names `targets` in the list of circuits (a worker's configured ones, at start). */
  async register(targets: readonly string[]): Promise<void> {
    if (targets.length > 0) await this.redis.sadd(this.targetsKey, ...targets);
  }

  /**
   * Before a call of job `jobId` (created at `order`, epoch ms) to `target`; `holdOnly` for a job
   * whose call just failed while the circuit is open (it is held, never made the probe at once).
   */
  async enter(target: string, jobId: string, order: number, holdOnly = false): Promise<Admission> {
    const { keys, args } = this.enterCommand(target, jobId, order, holdOnly);
    return admissionOf(await this.redis.pwCircuitEnter(...keys, ...args));
  }

  /** The keys and arguments of `circuitEnter` (`CIRCUIT_ENTER_KEYS`, `CIRCUIT_ENTER_ARGS`). */
  enterCommand(target: string, jobId: string, order: number, holdOnly = false) {
    const { failureThreshold, probeIntervalMs, leaseMs } = this.settings;
    return {
      keys: [
        this.key(target),
        this.key(target, ':held'),
        this.key(target, ':in-flight'),
        this.targetsKey,
        this.failingKey(target, jobId),
      ],
      args: [
        jobId,
        order,
        failureThreshold,
        jittered(probeIntervalMs, this.random),
        leaseMs,
        this.maxHoldMs,
        target,
        holdOnly ? '1' : '0',
        this.settings.jobKeyPrefix ?? '',
      ],
    };
  }

  /** The circuit's state now. */
  async state(target: string): Promise<CircuitState> {
    return (await this.redis.hget(this.key(target), 'state')) === 'open' ? 'open' : 'closed';
  }

  /** The job no longer waits for the circuit (it finished without a call, or failed for good). */
  async forget(target: string, jobId: string): Promise<void> {
    await this.redis
      .multi()
      .zrem(this.key(target, ':held'), jobId)
      .del(this.failingKey(target, jobId))
      .exec();
  }

  /** After the call of job `jobId` (or instead of it, `neutral`). */
  async leave(target: string, jobId: string, result: CallResult): Promise<Departure> {
    const [state, transition, failures, next, inMs] = await this.redis.pwCircuitLeave(
      this.key(target),
      this.key(target, ':in-flight'),
      this.targetsKey,
      this.key(target, ':held'),
      this.failingKey(target, jobId),
      jobId,
      result,
      this.settings.failureThreshold,
      jittered(this.settings.probeIntervalMs, this.random),
      target,
      this.settings.jobKeyPrefix ?? '',
      this.settings.jobFailuresKeptMs ?? DAY_MS,
    );
    return {
      state,
      transition: transition === 'opened' || transition === 'closed' ? transition : null,
      failures,
      wake: next ? { jobId: next, inMs: inMs ?? 0 } : null,
    };
  }

  /** The job's failed probes counted towards its release (`RELEASED_AFTER_FAILED_PROBES`). */
  async failedProbes(target: string, jobId: string): Promise<number> {
    return Number((await this.redis.hget(this.failingKey(target, jobId), 'failed_probes')) ?? 0);
  }

  /** The job's failures against this target, kept while they may tell a poison input. */
  private failingKey(target: string, jobId: string): string {
    return this.key(target, `:failing:${jobId}`);
  }

  /** An operator opens or closes a circuit by hand; the transition, or null if none. */
  async override(target: string, state: CircuitState): Promise<'opened' | 'closed' | null> {
    const transition = await this.redis.pwCircuitOverride(
      this.key(target),
      this.targetsKey,
      state,
      target,
    );
    return transition === 'opened' || transition === 'closed' ? transition : null;
  }

  /** The ids of the jobs a circuit holds, in their order in the line. */
  held(target: string): Promise<string[]> {
    return this.redis.zrange(this.key(target, ':held'), '0', '-1');
  }

  /**
   * Moves the jobs the circuit held back to waiting, in their order (each goes to the end of the
   * line, so they are taken in this order), and returns how many. A job no longer delayed (taken
   * already, removed) is passed over. Should this process die half-way, the others come back on
   * their own after their hold.
   */
  async wakeHeld(target: string, queue: Queue): Promise<number> {
    // Taken off the list at once: a job held again meanwhile is listed anew.
    const [[, listed] = [null, []]] =
      (await this.redis
        .multi()
        .zrange(this.key(target, ':held'), '0', '-1')
        .del(this.key(target, ':held'))
        .exec()) ?? [];
    const ids = listed as string[];
    let woken = 0;
    for (const id of ids) {
      const job = await queue.getJob(id);
      if (!job || !(await job.isDelayed())) continue;
      await job.promote().then(
        () => woken++,
        () => undefined,
      );
    }
    return woken;
  }

  /** Every known circuit, by target. */
  async list(): Promise<CircuitView[]> {
    const targets = (await this.redis.smembers(this.targetsKey)).sort();
    return Promise.all(targets.map((target) => this.view(target)));
  }

  /** One circuit; a target never seen is closed. */
  async view(target: string): Promise<CircuitView> {
    const [fields, held] = await Promise.all([
      this.redis.hgetall(this.key(target)),
      this.redis.zcard(this.key(target, ':held')),
    ]);
    const time = (ms: string | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);
    const state: CircuitState = fields.state === 'open' ? 'open' : 'closed';
    return {
      target,
      state,
      since: time(fields.since),
      consecutive_failures: Number(fields.failures ?? 0),
      held_actions: held,
      manual: fields.manual === '1',
      next_probe_at: state === 'open' && fields.manual !== '1' ? time(fields.next_probe_at) : null,
    };
  }

  /** True when the target is known (configured by a worker, or seen failing). */
  async known(target: string): Promise<boolean> {
    return (await this.redis.sismember(this.targetsKey, target)) === 1;
  }

  private get maxHoldMs(): number {
    return this.settings.maxHoldMs ?? Math.max(60_000, 10 * this.settings.probeIntervalMs);
  }
}
