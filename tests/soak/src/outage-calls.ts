// The partner's calls during each outage stretch against what the circuit breaker promises: while
// a target is down it sees at most CIRCUIT_FAILURE_THRESHOLD calls plus one probe per
// CIRCUIT_PROBE_INTERVAL_MS (docs/reliability-and-security.md, "Outages: the circuit breaker"),
// besides the calls already in flight when the outage began and those that end an action at once.
import type { RecordedCall } from '@pw/sandbox';
import type { FaultName, FaultRecord } from './faults.js';

/** What the bound is made of: the workers' settings as the soak starts them. */
export interface BoundSettings {
  /** Partner targets the workers call, each with a circuit of its own. */
  targets: number;
  workers: number;
  WORKER_CONCURRENCY: number;
  CIRCUIT_FAILURE_THRESHOLD: number;
  CIRCUIT_PROBE_INTERVAL_MS: number;
}

export interface StretchCalls {
  fault: FaultName;
  from: string;
  until: string;
  stretch_ms: number;
  /** Calls the stand-in received during the stretch, but those that ended an action at once. */
  calls: number;
  /** Calls answered with a 4xx that ends an action at once (an odd path's 404), counted apart. */
  ended_at_once: number;
  /** Every call received during the stretch, by the status it was answered (0: reset). */
  by_status: Record<string, number>;
  bound: number;
  /** The bound's parts, which add up to it. */
  bound_parts: { failures: number; probes: number; in_flight: number };
  within: boolean;
}

export interface OutageCalls {
  /** How the bound of each stretch is reckoned, in words. */
  bound: string;
  settings: BoundSettings;
  stretches: StretchCalls[];
}

/**
 * A 4xx the worker fails an action for at once: all but 408 and 429 (retryable) and 401 (tried
 * again with a new token).
 */
export const endsActionAtOnce = (status: number): boolean =>
  status >= 400 && status < 500 && ![401, 408, 429].includes(status);

/** The bound of a stretch of `ms`: per target, the threshold, one probe per interval and one more. */
function boundOf(ms: number, settings: BoundSettings) {
  const failures = settings.targets * settings.CIRCUIT_FAILURE_THRESHOLD;
  const probes = settings.targets * (Math.ceil(ms / settings.CIRCUIT_PROBE_INTERVAL_MS) + 1);
  const inFlight = settings.workers * settings.WORKER_CONCURRENCY;
  return { failures, probes, in_flight: inFlight };
}

/** Each outage stretch among `faults`, with the calls the partner received during it. */
export function outageCalls(
  faults: readonly FaultRecord[],
  calls: readonly RecordedCall[],
  settings: BoundSettings,
): OutageCalls {
  const stretches = faults.flatMap(({ fault, stretch }) => {
    if (!stretch) return [];
    const from = Date.parse(stretch.from);
    const until = Date.parse(stretch.until);
    const during = calls.filter((call) => {
      const at = call.received_at.getTime();
      return at >= from && at < until;
    });
    const byStatus: Record<string, number> = {};
    for (const call of during) byStatus[call.status] = (byStatus[call.status] ?? 0) + 1;
    const endedAtOnce = during.filter((call) => endsActionAtOnce(call.status)).length;
    const parts = boundOf(stretch.ms, settings);
    const bound = parts.failures + parts.probes + parts.in_flight;
    const counted = during.length - endedAtOnce;
    return [
      {
        fault,
        from: stretch.from,
        until: stretch.until,
        stretch_ms: stretch.ms,
        calls: counted,
        ended_at_once: endedAtOnce,
        by_status: byStatus,
        bound,
        bound_parts: parts,
        within: counted <= bound,
      },
    ];
  });
  return {
    bound:
      'per target CIRCUIT_FAILURE_THRESHOLD + ceil(stretch_ms / CIRCUIT_PROBE_INTERVAL_MS) + 1, ' +
      'plus each worker’s WORKER_CONCURRENCY for the calls already in flight when the stretch began; ' +
      'calls that ended an action at once (4xx but 401, 408, 429) are counted apart',
    settings,
    stretches,
  };
}
