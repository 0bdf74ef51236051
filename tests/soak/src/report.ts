// The soak's report: what it writes with `--report` (JSON), what makes it fail, and the table it
// prints.
import type { Findings, percentiles } from './checks.js';
import type { FaultRecord } from './faults.js';
import type { SoakOptions } from './options.js';
import type { OutageCalls } from './outage-calls.js';
import { loopbackOnly } from './listening.js';

/** The bound on Redis's memory per finished webhook (docs/redis-cost.md). */
export const BYTES_PER_WEBHOOK_BOUND = 500;

export interface SoakReport {
  command: string;
  machine: { cpus: number; memory_gb: number; node: string };
  options: SoakOptions;
  started_at: string;
  finished_at: string;
  sent: {
    events: number;
    requests: number;
    unacknowledged: number;
    /**
     * Of `events`, those the faults added: `poison-burst`'s poison and the ordinary quotes that
     * trickle in while it runs, and `gateway-404`'s odd paths.
     */
    fault_events: { poison: number; odd_path: number; trickle: number; burst: number };
  };
  faults: FaultRecord[];
  findings: Findings;
  /**
   * Actions of ordinary events (not poison, not refused odd paths, not schema-invalid) that ended
   * failed: a dead letter no fault of the soak should cause. Must be 0.
   */
  ordinary_dead_letters_from_outages: number;
  /** The calls the partner received during each outage stretch, against the breaker's bound. */
  partner_calls_during_outages: OutageCalls;
  ledger: Record<string, unknown>;
  /** The addresses the apps' ports listen on, as the kernel says: `127.0.0.1` alone. */
  listening: string[];
  redis: {
    /** Per finished webhook, in the kinds of key that grow with webhooks. */
    bytes_per_webhook: number;
    bound: number;
    /** In all, in the kinds bounded whatever the traffic (`BOUNDED_KINDS`). */
    shared_bytes: number;
    /** Bytes each kind of key grew by over the run. */
    grown_by_kind: Record<string, number>;
    /** Webhooks left out: those with a dead letter, which Redis keeps for operators. */
    dead_letter_webhooks_left_out: number;
  };
  latency_ms: {
    ack: ReturnType<typeof percentiles>;
    action_completion: ReturnType<typeof percentiles>;
  };
  passed: boolean;
  /** The soak's exit status: 0 when every check held, else 1. */
  exit_status: 0 | 1;
  /** Why it did not pass; empty when it did. */
  failures: string[];
}

/** What the checks found, for `judge`. */
export type Judged = Pick<
  SoakReport,
  'findings' | 'ledger' | 'redis' | 'partner_calls_during_outages' | 'listening'
> & { unacknowledged: number };

/** What makes the soak fail: each a line. */
export function judge({
  findings: found,
  ledger,
  redis,
  partner_calls_during_outages: outages,
  unacknowledged,
  listening,
}: Judged): string[] {
  const failures: string[] = [];
  if (!loopbackOnly(listening)) {
    failures.push(`the apps listen beyond this machine: on ${listening.join(', ')}`);
  }
  // The first few named, so that a failed run says which webhooks and actions to look at.
  const count = (what: string, list: readonly unknown[]) => {
    if (list.length === 0) return;
    const named = list.slice(0, 5).map(String).join(', ');
    failures.push(`${list.length} ${what}: ${named}${list.length > 5 ? ', ...' : ''}`);
  };
  count('acknowledged webhooks lost (not in the record store)', found.lost);
  count(
    `webhooks stuck (not final after the drain; by kind of event ${JSON.stringify(found.stuck_by_purpose)})`,
    found.stuck,
  );
  count(
    'ordinary actions dead-lettered (no fault of the soak is permanent for them)',
    found.failed,
  );
  count('partner effects missing', found.effects.missing);
  count('partner effects not expected (skipped or failed actions)', found.effects.unexpected);
  count('duplicate partner effects (one event under two webhook ids)', found.effects.duplicate);
  count('redeliveries answered with another webhook id', found.redelivered_as_new);
  if (found.stale_older < found.older) {
    failures.push(
      `${found.older - found.stale_older} older events not stale though their entity's newer one was acknowledged first`,
    );
  }
  count(
    "entities whose last state-changing call was not their newest event's",
    found.order.backwards,
  );
  count('entities whose state-changing calls overlapped', found.order.overlapping);
  for (const stretch of outages.stretches.filter((s) => !s.within)) {
    failures.push(
      `${stretch.fault} from ${stretch.from}: the partner got ${stretch.calls} calls in ${stretch.stretch_ms} ms of outage (bound ${stretch.bound})`,
    );
  }
  if (ledger.balanced !== true) failures.push('the ledger does not balance');
  if (redis.bytes_per_webhook >= BYTES_PER_WEBHOOK_BOUND) {
    failures.push(
      `Redis keeps ${redis.bytes_per_webhook} bytes per webhook (bound ${BYTES_PER_WEBHOOK_BOUND})`,
    );
  }
  if (unacknowledged > 0) failures.push(`${unacknowledged} events never acknowledged`);
  return failures;
}

/** The report's figures, a line each. */
function rows(report: SoakReport): [string, string | number][] {
  const f = report.findings;
  const { poison, refused } = f.expected_failures;
  return [
    ['apps listen on', report.listening.join(', ')],
    ['events sent', report.sent.events],
    [
      'of them poison / odd-path / trickle / burst',
      `${report.sent.fault_events.poison} / ${report.sent.fault_events.odd_path} / ${report.sent.fault_events.trickle} / ${report.sent.fault_events.burst}`,
    ],
    ['requests', report.sent.requests],
    ['acknowledged', f.acknowledged],
    ['never acknowledged', report.sent.unacknowledged],
    ['lost (acknowledged, not stored)', f.lost.length],
    [
      'stuck (not final), by kind of event',
      `${f.stuck.length} ${JSON.stringify(f.stuck_by_purpose)}`,
    ],
    ['ordinary actions dead-lettered', report.ordinary_dead_letters_from_outages],
    [
      'poison actions dead-lettered (attempts spent)',
      `${poison.dead_letters} of ${poison.actions} (${poison.attempts_spent})`,
    ],
    ['odd paths refused at once (first attempt)', `${refused.actions} (${refused.first_attempt})`],
    ['quarantined', f.quarantined],
    ['redeliveries sent', f.redeliveries],
    ['redeliveries given a new webhook id', f.redelivered_as_new.length],
    ['older events stale (newer acknowledged first)', `${f.stale_older} of ${f.older}`],
    [
      "entities in order (last call the newest event's, none overlapping)",
      `${f.order.entities - new Set([...f.order.backwards, ...f.order.overlapping]).size} of ${f.order.entities}`,
    ],
    ['partner effects expected', f.effects.expected],
    ['partner effects applied', f.effects.applied],
    ['partner effects missing', f.effects.missing.length],
    ['partner effects unexpected', f.effects.unexpected.length],
    ['duplicate partner effects', f.effects.duplicate.length],
    ['calls repeating an applied key', f.effects.repeated_calls],
    ['ledger balanced', String(report.ledger.balanced)],
    ['Redis bytes per webhook', `${report.redis.bytes_per_webhook} (bound ${report.redis.bound})`],
    ['Redis bytes in bounded kinds', report.redis.shared_bytes],
    ['ack latency p50/p95/p99/max ms', Object.values(report.latency_ms.ack).join(' / ')],
    [
      'action completion p50/p95/p99/max ms',
      Object.values(report.latency_ms.action_completion).join(' / '),
    ],
  ];
}

/** Each outage stretch, a line: its calls against its bound. */
function stretchLines(outages: OutageCalls): string[] {
  const { settings } = outages;
  return [
    `partner calls during outages (bound: ${outages.bound}; targets ${settings.targets}, workers ${settings.workers} of WORKER_CONCURRENCY ${settings.WORKER_CONCURRENCY}):`,
    ...outages.stretches.map((s) => {
      const { failures, probes, in_flight } = s.bound_parts;
      const verdict = s.within ? 'within' : 'OVER';
      return `${s.from}  ${s.fault} ${(s.stretch_ms / 1000).toFixed(1)} s: ${s.calls} calls (+${s.ended_at_once} ended an action at once), bound ${s.bound} = ${failures} + ${probes} probes + ${in_flight} in flight: ${verdict}`;
    }),
  ];
}

/** The report as the soak prints it. */
export function table(report: SoakReport): string {
  const lines = rows(report);
  const width = Math.max(...lines.map(([name]) => name.length));
  const faults = report.faults.map((fault) => `${fault.started_at}  ${fault.detail}`);
  return [
    ...lines.map(([name, value]) => `${name.padEnd(width)}  ${value}`),
    '',
    'faults:',
    ...faults,
    '',
    ...stretchLines(report.partner_calls_during_outages),
    '',
    report.passed ? 'PASSED' : 'FAILED',
    ...report.failures,
  ].join('\n');
}
