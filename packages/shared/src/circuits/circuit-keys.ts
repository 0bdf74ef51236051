// The circuits of the partner targets, kept in Redis so every worker process shares them and the
// dashboard reads them (docs/reliability-and-security.md, "Outages: the circuit breaker"). The
// worker's breaker (apps/worker) drives them; the read side and an operator's changes are here.
//
// One hash per partner target (`{prefix}:circuit:{target}`): `state` (closed, open), `reason` (why
// it is open: `failures`, `reopened`, `manual`), `failures` (consecutive counted retryable
// failures), `since`, `next_probe_at`, `probe_job` and `probe_until` (the probe in flight),
// `probe_turn` (probes given so far: the newest or the oldest fresh job is first in line),
// `probe_next` (the job told to come back for the next probe), `manual` (opened by an operator),
// `warm` (a 2xx came since the last failure), `recovering` (closed a moment ago: until the next
// 2xx, one failure reopens it), `recovering_job` and `recovering_until` (the job whose call is
// the first after the close), `recovering_poison` (the one input judged poison meanwhile),
// `succeeded_at` (its last 2xx reported). Next to it: a sorted set of the jobs it holds, in three
// tiers (fresh, failed, poison); a sorted set of the calls in flight while the target is suspect;
// a hash per webhook whose actions failed (`failed_at`, `poison`: its actions are calls about one
// event), kept a day after its last failure; the set of jobs (inputs) whose failures are counted
// since the last 2xx (`failures` is its size); a sorted set of the jobs of poison inputs (job id, when they
// last failed), the newest 1000; and one set naming every target. Times are Redis's clock, in ms.

import { keys } from '../queue/redis-keys.js';
import type { CircuitKeys } from '../queue/redis-keys.js';

export type CircuitState = 'closed' | 'open';

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
  /**
   * Why it is open: `failures` (`CIRCUIT_FAILURE_THRESHOLD` retryable failures in a row across
   * inputs), `reopened` (a retryable failure among the first calls after a close), `manual` (an
   * operator); null when closed.
   */
  reason: CircuitOpenReason | null;
  /** Closed, and no other call has succeeded since: one retryable failure opens it again. */
  recovering: boolean;
  /** How many inputs it judges poison now (their failures do not count towards it). */
  poison_inputs: number;
  /** The 20 most recently judged poison, newest first. */
  poison: PoisonInput[];
}

/** Why a circuit is open. */
export type CircuitOpenReason = 'failures' | 'reopened' | 'manual';

/**
 * An action the partner failed with a retryable status while it served other inputs: its
 * failures do not count towards the circuit, and it spends its attempts.
 */
export interface PoisonInput {
  webhook_id: string;
  action: string;
  /** When it was judged poison (ISO). */
  since: string;
}

/** The keys of one target's circuit, as the key map (queue/redis-keys.ts) names them. */
export type { CircuitKeys } from '../queue/redis-keys.js';

/** The set naming every target with a circuit. */
export const circuitTargetsKey = (queuePrefix: string): string => keys.circuitTargets(queuePrefix);

/** The keys of `target`'s circuit. */
export function circuitKeys(queuePrefix: string, target: string): CircuitKeys {
  return keys.circuit(queuePrefix, target);
}
