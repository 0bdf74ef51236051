import { CircuitBoard } from '@pw/shared/circuits';
import { withCommand } from '@pw/shared/lua';
import { channels, webhookIdOfJob } from '@pw/shared/queue';
import { invalidArgument } from '@pw/shared/runtime';
import type { CircuitBoardSettings, CircuitState } from '@pw/shared/circuits';
import type { RedisClient } from '@pw/shared/runtime';
import { ENTER, LEAVE } from './circuit-scripts.js';

/** A job to wake for the next probe, `inMs` from now. */
export interface Wake {
  jobId: string;
  inMs: number;
}

/** What a job does about the circuit before its call. */
export type Admission =
  /**
   * Call; `tracked`: the call holds an in-flight lease (`leave` must follow); `report`: its answer
   * is reported even when untracked (the job has failures to forget).
   */
  | { kind: 'call'; tracked: boolean; report: boolean }
  /** Call: this is the one probe of the interval. */
  | { kind: 'probe' }
  /** The target is suspect and enough calls are in flight: try again in a moment (not held). */
  | { kind: 'wait' }
  /**
   * The circuit is open: hold the job for `delayMs` (or until the circuit closes); `newly`: it was
   * not held already (a job woken to look again is not newly held); `wake`: another job is now
   * first in line, asleep for a long hold, to be woken for the next probe.
   */
  | { kind: 'hold'; delayMs: number; newly: boolean; wake?: Wake };

/** How a call went, as far as the circuit is concerned. */
export type CallResult =
  /** The target served it: a 2xx. The only answer that closes a circuit. */
  | 'succeeded'
  /**
   * The target refused this input (a 4xx other than 408 and 429, a token refused): the action
   * ends, and nothing is learnt of the target's health.
   */
  | 'refused'
  /** A retryable failure: a network error, 408, 429, 5xx, its identity provider unreachable. */
  | 'unavailable'
  /** Neither (no call was made, an unexpected error): only the lease is given back. */
  | 'neutral';

/** What `leave` did to the circuit. */
export interface Departure {
  /** The circuit's state after the call. */
  state: CircuitState;
  /** Set when this call moved the circuit. */
  transition: 'opened' | 'reopened' | 'closed' | null;
  failures: number;
  /** After a probe that did not close it: the job now first in line, to wake for the next. */
  wake: Wake | null;
  /** The job is a poison input: its failures do not count toward the circuit. */
  poison: boolean;
  /** This failure made it one. */
  judged: boolean;
  /**
   * The first failure after a close: the job is held, no attempt spent, though the circuit is
   * closed, while the next call tells whether the target or this input failed.
   */
  held: boolean;
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
   * How long a webhook's failures (when one of its actions last failed, whether it is poison) are
   * kept after its last. Forgotten early, a poison input only counts once more toward the circuit.
   * @defaultValue one day
   */
  jobFailuresKeptMs?: number;
  /** The clock of the circuit, epoch ms. @defaultValue Redis's own (`TIME`) */
  clock?: () => number;
}

/** The reply of `circuitEnter`: {kind, n, newly or report, first in line, in ms, tell}. */
export type EnterReply = [string, number, number?, string?, number?, number?];

/** What `circuitEnter`'s reply means. */
export function admissionOf([kind, n, third, first, inMs, tell]: EnterReply): Admission {
  if (kind === 'call') return { kind, tracked: n === 1, report: n === 1 || third === 1 };
  if (kind === 'probe' || kind === 'wait') return { kind };
  const held = { kind: 'hold' as const, delayMs: n, newly: third === 1 };
  return first && tell === 1 ? { ...held, wake: { jobId: first, inMs: inMs ?? 0 } } : held;
}

/** The reply of `circuit-leave-7.lua`. */
type LeaveReply = [CircuitState, string, number, string, number, number, number, number];

interface BreakerCommands {
  pwCircuitEnter(...args: (string | number)[]): Promise<EnterReply>;
  pwCircuitLeave(...args: (string | number)[]): Promise<LeaveReply>;
}

/** Jobs removed by hand passed over in one look at the line (more wait for the next look). */
const PASSED_OVER_AT_MOST = 10;

/** How long a job's failures are kept by default (`jobFailuresKeptMs`). */
const DAY_MS = 86_400_000;

/** The most poison inputs a circuit lists (the newest). */
export const POISON_LISTED = 1000;

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

  /** The job to wake after `jobId`'s probe, passing over jobs removed by hand. */
  private async nextInLine(target: string, jobId: string, first: string): Promise<string | null> {
    const { circuit, held } = this.keys(target);
    let next: string | undefined = first;
    for (let passed = 0; next && next !== jobId && passed < PASSED_OVER_AT_MOST; passed++) {
      if (await this.jobExists(next)) return next;
      await this.redis.multi().zrem(held, next).hdel(circuit, 'probe_next').exec();
      [next] = await this.redis.zrange(held, '0', '0');
    }
    return next && next !== jobId ? next : null;
  }

  /** The keys and arguments of `circuit-enter-6.lua`. */
  private enterCommand(target: string, jobId: string, order: number, holdOnly = false) {
    const { failureThreshold, probeIntervalMs, leaseMs } = this.breakerSettings;
    const keys = this.keys(target);
    return {
      keys: [
        ...[keys.circuit, keys.held, keys.inFlight, keys.targets],
        ...[keys.failing(webhookIdOfJob(jobId)), keys.streak],
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
        this.scriptJobKeyPrefix,
        this.now,
      ],
    };
  }

  /**
   * The job no longer waits for the circuit (it finished without a call, or failed for good). Its
   * webhook's failures stay: its other actions may still fail.
   */
  async forget(target: string, jobId: string): Promise<void> {
    const keys = this.keys(target);
    await this.redis.multi().zrem(keys.held, jobId).zrem(keys.poison, jobId).exec();
  }

  /**
   * After the call of job `jobId` (or instead of it, `neutral`), sent `sentMsAgo` ms ago: a 2xx to
   * a call sent before the target's last failure changes nothing of the circuit.
   */
  async leave(
    target: string,
    jobId: string,
    result: CallResult,
    sentMsAgo?: number,
  ): Promise<Departure> {
    const { failureThreshold, probeIntervalMs, jobFailuresKeptMs } = this.breakerSettings;
    const keys = this.keys(target);
    const webhook = webhookIdOfJob(jobId);
    const [state, transition, failures, next, inMs, poison, judged, held] =
      await this.breaker.pwCircuitLeave(
        ...[keys.circuit, keys.inFlight, keys.targets, keys.held, keys.failing(webhook)],
        ...[keys.poison, keys.streak],
        ...[jobId, result, failureThreshold, jittered(probeIntervalMs, this.random), target],
        ...[this.scriptJobKeyPrefix, jobFailuresKeptMs ?? DAY_MS],
        channels.circuitChanged(this.settings.queuePrefix),
        ...[this.now, POISON_LISTED, webhook, sentMsAgo === undefined ? '' : Math.ceil(sentMsAgo)],
      );
    const wake = next ? await this.nextInLine(target, jobId, next) : null;
    return {
      state,
      transition:
        transition === 'opened' || transition === 'reopened' || transition === 'closed'
          ? transition
          : null,
      failures,
      wake: wake ? { jobId: wake, inMs } : null,
      poison: poison === 1,
      judged: judged === 1,
      held: held === 1,
    };
  }

  /** The time the scripts are given: '' for Redis's own clock. */
  private get now(): number | '' {
    return this.breakerSettings.clock?.() ?? '';
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
