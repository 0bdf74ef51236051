import { channels, CircuitBoard, invalidArgument, withCommand } from '@pw/shared';
import type { CircuitBoardSettings, CircuitState, RedisClient } from '@pw/shared';
import { ENTER, LEAVE } from './circuit-scripts.js';

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

export interface CircuitBreakerSettings extends CircuitBoardSettings {
  /** Consecutive retryable failures that open a circuit (`CIRCUIT_FAILURE_THRESHOLD`). */
  failureThreshold: number;
  /** Time between probes of an open circuit (`CIRCUIT_PROBE_INTERVAL_MS`). */
  probeIntervalMs: number;
  /** How long a call may hold its in-flight lease or the probe before it counts as gone. */
  leaseMs: number;
  /**
   * The key prefix of the held jobs (BullMQ's `queue.toKey('')`), so a job removed by hand while
   * first in line is passed over; without it, the next probe waits for a job that does not come.
   * With partitions, the key of each job (its partition's queue's `toKey(jobId)`): the jobs then
   * live under other hash tags than the circuit, so their keys are read by commands of their own,
   * not by the circuit's scripts (a script's keys must share a slot in a Redis Cluster).
   */
  jobKeyPrefix?: string | ((jobId: string) => string);
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

/** The reply of `circuitEnter`: {kind, n, newly, first in line}. */
export type EnterReply = [string, number, number?, string?];

/** What `circuitEnter`'s reply means. */
export function admissionOf([kind, n, newly]: EnterReply): Admission {
  if (kind === 'call') return { kind, tracked: n === 1 };
  if (kind === 'probe' || kind === 'wait' || kind === 'released') return { kind };
  return { kind: 'hold', delayMs: n, newly: newly === 1 };
}

interface BreakerCommands {
  pwCircuitEnter(...args: (string | number)[]): Promise<EnterReply>;
  pwCircuitLeave(
    ...args: (string | number)[]
  ): Promise<[CircuitState, string, number, string?, number?]>;
}

/** Jobs removed by hand passed over in one look at the line (more wait for the next look). */
const PASSED_OVER_AT_MOST = 10;

/** How long a job's failures are kept by default (`jobFailuresKeptMs`). */
const DAY_MS = 86_400_000;

/**
 * A jittered probe interval, so workers do not probe in step: up to 40% longer, never shorter (at
 * most one probe per interval).
 */
const jittered = (intervalMs: number, random: () => number) =>
  Math.round(intervalMs * (1 + 0.4 * random()));

/**
 * The circuit breaker of every partner target, shared by the worker processes through Redis
 * (the layout: @pw/shared's circuit-keys.ts): a job asks before its call (`enter`) and reports
 * after it (`leave`). Reads and an operator's changes are those of the `CircuitBoard` it extends.
 */
export class CircuitBreaker extends CircuitBoard {
  private readonly breaker: RedisClient & BreakerCommands;

  constructor(
    redis: RedisClient,
    private readonly breakerSettings: CircuitBreakerSettings,
    private readonly random: () => number = Math.random,
  ) {
    super(redis, { queuePrefix: breakerSettings.queuePrefix });
    if (breakerSettings.failureThreshold < 1 || breakerSettings.probeIntervalMs < 1) {
      throw invalidArgument('a circuit needs a threshold and a probe interval of at least 1');
    }
    withCommand(redis, ENTER);
    this.breaker = withCommand<BreakerCommands>(redis, LEAVE);
  }

  /**
   * Before a call of job `jobId` (created at `order`, epoch ms) to `target`; `holdOnly` for a job
   * whose call just failed while the circuit is open (it is held, never made the probe at once).
   */
  async enter(target: string, jobId: string, order: number, holdOnly = false): Promise<Admission> {
    const { keys, args } = this.enterCommand(target, jobId, order, holdOnly);
    let reply = await this.breaker.pwCircuitEnter(...keys, ...args);
    let admission = admissionOf(reply);
    // Jobs of other partitions: one removed by hand while first in line is passed over here.
    for (let passed = 0; passed < PASSED_OVER_AT_MOST && reply[3]; passed++) {
      if (await this.jobExists(reply[3])) break;
      await this.redis.zrem(keys[1]!, reply[3]);
      reply = await this.breaker.pwCircuitEnter(...keys, ...args);
      const again = admissionOf(reply);
      admission =
        admission.kind === 'hold' && again.kind === 'hold'
          ? { ...again, newly: admission.newly || again.newly }
          : again;
    }
    return admission;
  }

  /** False when `jobKeyPrefix` is a function and the job's key is gone. */
  private async jobExists(jobId: string): Promise<boolean> {
    const { jobKeyPrefix } = this.breakerSettings;
    if (typeof jobKeyPrefix !== 'function') return true;
    return (await this.redis.exists(jobKeyPrefix(jobId))) === 1;
  }

  /** The job first in line after `jobId`'s failed probe, passing over jobs removed by hand. */
  private async nextInLine(target: string, jobId: string, first: string): Promise<string | null> {
    let next: string | undefined = first;
    for (let passed = 0; next && next !== jobId && passed < PASSED_OVER_AT_MOST; passed++) {
      if (await this.jobExists(next)) return next;
      const { held } = this.keys(target);
      await this.redis.zrem(held, next);
      [next] = await this.redis.zrange(held, '0', '0');
    }
    return next && next !== jobId ? next : null;
  }

  /** The keys and arguments of `circuit-enter-5.lua`. */
  private enterCommand(target: string, jobId: string, order: number, holdOnly = false) {
    const { failureThreshold, probeIntervalMs, leaseMs } = this.breakerSettings;
    const keys = this.keys(target);
    return {
      keys: [keys.circuit, keys.held, keys.inFlight, keys.targets, keys.failing(jobId)],
      args: [
        jobId,
        order,
        failureThreshold,
        jittered(probeIntervalMs, this.random),
        leaseMs,
        this.maxHoldMs,
        target,
        holdOnly ? '1' : '0',
        this.scriptJobKeyPrefix,
      ],
    };
  }

  /** The job no longer waits for the circuit (it finished without a call, or failed for good). */
  async forget(target: string, jobId: string): Promise<void> {
    const keys = this.keys(target);
    await this.redis.multi().zrem(keys.held, jobId).del(keys.failing(jobId)).exec();
  }

  /** After the call of job `jobId` (or instead of it, `neutral`). */
  async leave(target: string, jobId: string, result: CallResult): Promise<Departure> {
    const { failureThreshold, probeIntervalMs, jobFailuresKeptMs } = this.breakerSettings;
    const keys = this.keys(target);
    const [state, transition, failures, next, inMs] = await this.breaker.pwCircuitLeave(
      ...[keys.circuit, keys.inFlight, keys.targets, keys.held, keys.failing(jobId)],
      ...[jobId, result, failureThreshold, jittered(probeIntervalMs, this.random), target],
      ...[this.scriptJobKeyPrefix, jobFailuresKeptMs ?? DAY_MS],
      channels.circuitChanged(this.settings.queuePrefix),
    );
    const wake = next ? await this.nextInLine(target, jobId, next) : null;
    return {
      state,
      transition: transition === 'opened' || transition === 'closed' ? transition : null,
      failures,
      wake: wake ? { jobId: wake, inMs: inMs ?? 0 } : null,
    };
  }

  /** The job's failed probes counted towards its release (`RELEASED_AFTER_FAILED_PROBES`). */
  async failedProbes(target: string, jobId: string): Promise<number> {
    const failing = this.keys(target).failing(jobId);
    return Number((await this.redis.hget(failing, 'failed_probes')) ?? 0);
  }

  /** The held jobs' key prefix the scripts check themselves ('' when `jobExists` does). */
  private get scriptJobKeyPrefix(): string {
    const { jobKeyPrefix } = this.breakerSettings;
    return typeof jobKeyPrefix === 'string' ? jobKeyPrefix : '';
  }

  private get maxHoldMs(): number {
    const { maxHoldMs, probeIntervalMs } = this.breakerSettings;
    return maxHoldMs ?? Math.max(60_000, 10 * probeIntervalMs);
  }
}
