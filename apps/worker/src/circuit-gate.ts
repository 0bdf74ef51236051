import type { Job, Queue } from 'bullmq';
import {
  codeOf,
  PermanentError,
  RetryableError,
  TOKEN_REQUEST_FAILED,
  TokenError,
} from '@pw/shared';
import type { ActionJobData, Logger } from '@pw/shared';
import type { Admission, CallResult, CircuitBreaker, Departure } from './circuit-breaker.js';
import type { CircuitCopy } from './circuit-copy.js';
import { NETWORK_ERROR } from './partner-api.js';
import type { WorkerMetrics } from './metrics.js';

/** OAuth error codes (RFC 6749 section 5.2, and 4.1.2.1) an identity provider that is down sends. */
const IDP_DOWN_CODES = new Set([TOKEN_REQUEST_FAILED, 'server_error', 'temporarily_unavailable']);

/**
 * How a try's error counts for the circuit: a retryable failure of the target (no answer, 408,
 * 429, 5xx, its identity provider unreachable or answering 5xx) is `unavailable`; a refusal by the
 * target (another 4xx, a token refused as `invalid_client`) means it answered; anything else
 * (no call made, a bug) is `neutral`.
 */
export function circuitResult(error: unknown): CallResult {
  if (error instanceof TokenError)
    return IDP_DOWN_CODES.has(error.code) ? 'unavailable' : 'answered';
  const code = codeOf(error) ?? '';
  if (error instanceof RetryableError) {
    return code === NETWORK_ERROR || code.startsWith('http_') ? 'unavailable' : 'neutral';
  }
  if (error instanceof PermanentError && code.startsWith('http_')) return 'answered';
  return 'neutral';
}

export interface CircuitGateDeps {
  circuits: CircuitBreaker;
  /** The `actions` queue a job id belongs to: its webhook's partition's. */
  queueOf: (jobId: string) => Queue<ActionJobData>;
  /** This process's copy of the circuits, told at once of the changes it makes. */
  copy?: CircuitCopy;
  metrics: WorkerMetrics;
  log: Logger;
}

/**
 * The worker's side of the circuits: asks before a call, reports after it, logs and counts each
 * transition, wakes the held jobs, in their order, when a circuit closes, and the next in line
 * for the probe when one fails.
 */
export class CircuitGate {
  constructor(private readonly deps: CircuitGateDeps) {}

  enter(target: string, job: Job<ActionJobData>, holdOnly = false): Promise<Admission> {
    return this.deps.circuits.enter(target, job.id ?? job.data.webhook_id, job.timestamp, holdOnly);
  }

  /** The circuit's state now. */
  state(target: string) {
    return this.deps.circuits.state(target);
  }

  /** The job finished without a call: it no longer waits for the circuit. */
  forget(target: string, job: Job<ActionJobData>): Promise<void> {
    return this.deps.circuits.forget(target, job.id ?? job.data.webhook_id);
  }

  /** Reports how the call went; returns the circuit's state after it. */
  async leave(target: string, job: Job<ActionJobData>, result: CallResult): Promise<Departure> {
    const departure = await this.deps.circuits.leave(target, job.id ?? job.data.webhook_id, result);
    // The announcement reaches this process too; its own next try needs not wait for it.
    if (result === 'unavailable' || departure.transition) this.deps.copy?.changed(target);
    if (departure.transition) this.changed(target, departure.transition, departure.failures);
    if (departure.wake) void this.wakeForProbe(target, departure.wake);
    return departure;
  }

  /**
   * A probe failed and its job went to the back of the line: the job now first in line, asleep
   * for a long hold, is woken for the next probe. Not found or not delayed (taken meanwhile), it
   * needs no waking; should this fail, the next probe waits for a job to look again on its own.
   */
  private async wakeForProbe(target: string, { jobId, inMs }: { jobId: string; inMs: number }) {
    try {
      const job = await this.deps.queueOf(jobId).getJob(jobId);
      if (job && (await job.isDelayed())) await job.changeDelay(inMs);
    } catch (error) {
      this.deps.log.debug({ err: error, target, job_id: jobId }, 'next in line not woken');
    }
  }

  /** A transition this process made: counted, logged, and on closing the held jobs woken. */
  private changed(target: string, to: 'opened' | 'closed', failures: number): void {
    const { metrics, log } = this.deps;
    metrics.circuitTransitions.inc({ target, to: to === 'opened' ? 'open' : 'closed' });
    if (to === 'opened') {
      log.warn(
        { target, consecutive_failures: failures },
        'circuit opened: actions for this target are held until a probe gets an answer',
      );
      return;
    }
    log.info({ target }, 'circuit closed: held actions resume');
    void this.deps.circuits
      .wakeHeld(target, this.deps.queueOf)
      .catch((error: unknown) =>
        log.warn(
          { err: error, target },
          'held actions not all woken; they look again on their own',
        ),
      );
  }
}
