// The circuits of the partner targets, kept in Redis so every worker process shares them and the
// dashboard reads them (docs/reliability-and-security.md, "Outages: the circuit breaker"). The
// worker's breaker (apps/worker) drives them; the read side and an operator's changes are here.
//
// One hash per partner target (`{prefix}:circuit:{target}`): `state` (closed, open), `failures`
// (consecutive retryable failures), `since`, `next_probe_at`, `probe_job` and `probe_until` (the
// probe in flight), `manual` (opened by an operator), `warm` (the target answered since its last
// failure), `answered_at` (its last answer reported); a sorted set of the jobs it holds, in their
// order (a job whose call or probe failed goes to the back); a sorted set of the calls in flight
// while the target is suspect; a hash per job that failed (`first_failure_at`, `failed_probes`:
// those counted towards its release), kept a day after its last failure; and one set naming every
// target. Times are Redis's clock, in ms.

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
}

/** The keys of one target's circuit. */
export interface CircuitKeys {
  circuit: string;
  /** The jobs it holds, first in line first. */
  held: string;
  /** Calls in flight while the target is suspect. */
  inFlight: string;
  /** The set naming every target. */
  targets: string;
  /** One job's failures against this target. */
  failing(jobId: string): string;
}

/** The set naming every target with a circuit. */
export const circuitTargetsKey = (queuePrefix: string): string => `${queuePrefix}:circuits`;

export function circuitKeys(queuePrefix: string, target: string): CircuitKeys {
  const circuit = `${queuePrefix}:circuit:${target}`;
  return {
    circuit,
    held: `${circuit}:held`,
    inFlight: `${circuit}:in-flight`,
    targets: circuitTargetsKey(queuePrefix),
    failing: (jobId) => `${circuit}:failing:${jobId}`,
  };
}
