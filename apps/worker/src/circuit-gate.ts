import type { Job, Queue } from 'bullmq';
import { TOKEN_REQUEST_FAILED, TokenError } from '@pw/shared/auth';
import { codeOf, PermanentError, RetryableError } from '@pw/shared/runtime';
import type { ActionJobData } from '@pw/shared/queue';
import type { Logger } from '@pw/shared/runtime';
import type { Admission, CallResult, CircuitBreaker, Departure, Wake } from './circuit-breaker.js';
import type { CircuitCopy } from './circuit-copy.js';
import { NETWORK_ERROR } from './partner-api.js';
import type { WorkerMetrics } from './metrics.js';

/** OAuth error codes (RFC 6749 section 5.2, and 4.1.2.1) an identity provider that is down sends. */
const IDP_DOWN_CODES = new Set([TOKEN_REQUEST_FAILED, 'server_error', 'temporarily_unavailable']);

/**
 * How a try's error counts for the circuit: a retryable failure of the target (no answer, 408,
 * 429, 5xx, its identity provider unreachable or answering 5xx) is `unavailable`; a refusal of
 * this input (another 4xx, a token refused as `invalid_client`) is `refused`, which says nothing
 * of the target's health; anything else (no call made, a bug) is `neutral`.
 */
export function circuitResult(error: unknown): CallResult {
  if (error instanceof TokenError)
    return IDP_DOWN_CODES.has(error.code) ? 'unavailable' : 'refused';
  const code = codeOf(error) ?? '';
  if (error instanceof RetryableError) {
    return code === NETWORK_ERROR || code.startsWith('http_') ? 'unavailable' : 'neutral';
  }
  if (error instanceof PermanentError && code.startsWith('http_')) return 'refused';
  return 'neutral';
}

/**
 * Whether a call's answer must be reported to the circuit: an untracked call's 2xx changes nothing
 * (the circuit is clean, and the job's webhook had no failures there).
 */
export const reportsAnswer = (admission: Admission): boolean =>
  admission.kind !== 'call' || admission.report;

/**
 * Whether a failed try is held again, without spending its attempt: a retryable failure after
 * which the circuit is open (this failure may have opened it), or the first right after a close.
 * Any other failure spends it.
 */
export const holdsAfterFailure = (result: CallResult, after: Departure): boolean =>
  result === 'unavailable' && (after.state === 'open' || after.held);

const POISON_MESSAGE =
  'poison input: it failed again while the target served other calls; its failures no longer count toward the circuit, and it spends its attempts';

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
 * change and each poison input, wakes the held jobs, in their order, when a circuit closes, and
 * the next in line for the probe when it changes.
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

  /** Reports how the call sent `sentMsAgo` ms ago went; returns the circuit's state after it. */
  async leave(
    target: string,
    job: Job<ActionJobData>,
    result: CallResult,
    sentMsAgo?: number,
  ): Promise<Departure> {
    const jobId = job.id ?? job.data.webhook_id;
    const departure = await this.deps.circuits.leave(target, jobId, result, sentMsAgo);
    // The announcement reaches this process too; its own next try needs not wait for it.
    if ((result === 'unavailable' && !departure.poison) || departure.transition) {
      this.deps.copy?.changed(target);
    }
    if (departure.transition) this.changed(target, departure.transition, departure.failures);
    if (departure.wake) this.wake(target, departure.wake);
    if (departure.judged) this.poisonJudged(target, job);
    return departure;
  }

  /** A poison input: counted, logged, and said in the job's log on the board. */
  private poisonJudged(target: string, job: Job<ActionJobData>): void {
    const { action, webhook_id: webhookId } = job.data;
    this.deps.metrics.poisonInputs.inc({ target, action });
    this.deps.log.warn({ target, webhook_id: webhookId, action }, POISON_MESSAGE);
    void job.log(POISON_MESSAGE).catch(() => undefined);
  }

  /**
   * The job now first in line (after a probe, or a newer fresh job held), asleep for a long hold,
   * is woken for the next probe. Not found or not delayed (taken meanwhile), it needs no waking;
   * should this fail, any job takes the probe once it is an interval overdue.
   */
  wake(target: string, next: Wake): void {
    void this.wakeForProbe(target, next);
  }

  private async wakeForProbe(target: string, { jobId, inMs }: Wake) {
    try {
      const job = await this.deps.queueOf(jobId).getJob(jobId);
      if (job && (await job.isDelayed())) await job.changeDelay(inMs);
    } catch (error) {
      this.deps.log.debug({ err: error, target, job_id: jobId }, 'next in line not woken');
    }
  }

  /** A change this process made: counted, logged, and on closing the held jobs woken. */
  private changed(target: string, change: 'opened' | 'reopened' | 'closed', failures: number) {
    const { metrics, log } = this.deps;
    metrics.circuitChanges.inc({ target, change });
    if (change !== 'closed') {
      log.warn(
        { target, consecutive_failures: failures },
        change === 'opened'
          ? 'circuit opened: actions for this target are held until a probe gets a 2xx'
          : 'circuit reopened: a call failed right after it closed; actions are held again',
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
