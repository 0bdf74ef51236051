// The bench's targets, one table: each row says how its value is read from the results and how
// it is compared, and both the goal printed and whether it is met come from that.
import type { Figures, Ratios, Target } from './results.js';

/** What the targets are read from. */
export interface Measured {
  figures: Figures;
  ratios: Ratios;
}

type Comparison = '>=' | '>' | '<=' | '<' | '=';

interface TargetRule {
  name: string;
  read: (m: Measured) => number;
  compare: Comparison;
  limit: number | ((m: Measured) => number);
  /** The goal as printed, where `<compare> <limit>` would say it less well. */
  goal?: string;
  /** What must also hold for the value to count as measured (something was sampled at all). */
  requires?: (m: Measured) => boolean;
}

const floodAnswers = (m: Measured) =>
  Object.values(m.figures.flood_unsigned.flood_answers).flatMap((byStatus) =>
    Object.entries(byStatus),
  );
const manyKeysAnswers = (m: Measured) => m.figures.flood_unsigned.flood_answers.many_keys ?? {};

export const TARGETS: readonly TargetRule[] = [
  {
    name: 'ingress, all cores, vs echo',
    read: (m) => m.ratios.ingress_cluster_vs_echo,
    compare: '>=',
    limit: 0.8,
  },
  {
    name: 'ingress, one process, vs echo',
    read: (m) => m.ratios.ingress_single_vs_echo,
    compare: '>=',
    limit: 0.65,
  },
  {
    name: 'ack p99 (all cores) vs echo p99',
    read: (m) => m.ratios.ack_p99_vs_echo_p99,
    compare: '<=',
    limit: 2,
  },
  {
    name: '2,000/s offered: accepted/s',
    read: (m) => m.figures.sustained_2000.accepted_per_s,
    compare: '>=',
    limit: 1960,
  },
  {
    name: '2,000/s offered: ack p99 ms',
    read: (m) => m.figures.sustained_2000.p99_ms,
    compare: '<=',
    limit: 35,
  },
  {
    name: "Redis's CPU per action vs raw BullMQ's",
    read: (m) => m.ratios.redis_cpu_per_action_vs_raw,
    compare: '<=',
    limit: 1.25,
  },
  {
    name: 'Redis bytes per finished webhook',
    read: (m) => m.figures.redis.redis_bytes_per_finished_webhook,
    compare: '<',
    limit: 500,
  },
  {
    name: 'no-op actions vs raw no-op worker',
    read: (m) => m.ratios.actions_vs_raw_noop_worker,
    compare: '>=',
    limit: 0.7,
  },
  {
    name: 'worker vs raw BullMQ worker making the same call',
    read: (m) => m.ratios.actions_vs_raw_http_worker,
    compare: '>=',
    limit: 0.8,
  },
  {
    name: 'two worker processes vs one',
    read: (m) => m.ratios.two_workers_vs_one,
    compare: '>=',
    limit: 1.5,
  },
  {
    name: 'worker with the recorder vs without',
    read: (m) => m.ratios.actions_recording_vs_not,
    compare: '>=',
    limit: 0.9,
  },
  {
    // Tracing as shipped (the bootstrap loaded, no endpoint) must cost nothing measurable: within
    // this machine's noise of the same process without the bootstrap.
    name: 'ingress, tracing off vs no bootstrap',
    read: (m) => m.ratios.ingress_tracing_off_vs_plain,
    compare: '>=',
    limit: 0.9,
  },
  {
    name: 'worker, tracing off vs no bootstrap',
    read: (m) => m.ratios.worker_tracing_off_vs_plain,
    compare: '>=',
    limit: 0.9,
  },
  {
    name: 'enqueue to first action start p50 ms, paced',
    read: (m) => m.figures.paced.enqueue_to_start_p50_ms,
    compare: '<=',
    limit: 2,
    requires: (m) => m.figures.paced.sampled > 0,
  },
  {
    name: 'enqueue to first action start p99 ms, paced',
    read: (m) => m.figures.paced.enqueue_to_start_p99_ms,
    compare: '<=',
    limit: 10,
    requires: (m) => m.figures.paced.sampled > 0,
  },
  {
    name: 'ingress RSS MB, largest process',
    read: (m) => m.figures.rss_peak_mb.ingress_per_process,
    compare: '<=',
    limit: 150,
  },
  {
    name: 'token requests (1 per worker per lifetime)',
    read: (m) => m.figures.tokens.requests,
    compare: '<=',
    // Each worker process has a token manager of its own: one token per process per lifetime.
    limit: ({ figures: { tokens } }) =>
      tokens.worker_processes_started * Math.ceil(tokens.run_s / tokens.token_lifetime_s),
  },
  {
    name: 'flood: answered only 401, 413 or 429',
    read: (m) =>
      floodAnswers(m).reduce(
        (sum, [status, count]) => sum + (['401', '413', '429'].includes(status) ? 0 : count),
        0,
      ),
    compare: '=',
    limit: 0,
    goal: 'all',
    requires: (m) => floodAnswers(m).length > 0,
  },
  {
    name: 'flood: many-keys bodies refused 413',
    read: (m) => manyKeysAnswers(m)['413'] ?? 0,
    compare: '>',
    limit: 0,
    goal: 'all past the limit',
    requires: (m) => Object.keys(manyKeysAnswers(m)).every((s) => s === '413' || s === '429'),
  },
  {
    name: 'flood: legitimate webhooks not 200',
    read: (m) => m.figures.flood_unsigned.legit_failed,
    compare: '=',
    limit: 0,
  },
  {
    name: 'flood: legitimate ack p99 vs alone',
    read: (m) => m.figures.flood_unsigned.p99_ratio,
    compare: '<=',
    limit: 3,
    requires: (m) => m.figures.flood_unsigned.p99_ratio > 0,
  },
  {
    name: 'AOF everysec cost on the ingress, %',
    read: (m) => m.ratios.aof_cost_pct,
    compare: '<',
    limit: 10,
  },
];

const holds: Record<Comparison, (value: number, limit: number) => boolean> = {
  '>=': (value, limit) => value >= limit,
  '>': (value, limit) => value > limit,
  '<=': (value, limit) => value <= limit,
  '<': (value, limit) => value < limit,
  '=': (value, limit) => value === limit,
};

/** Each target of `rules` with its goal, its value from `measured` and whether it is met. */
export function evaluateTargets(measured: Measured, rules = TARGETS): Target[] {
  return rules.map((rule) => {
    const value = rule.read(measured);
    const limit = typeof rule.limit === 'number' ? rule.limit : rule.limit(measured);
    const shown = limit.toLocaleString('en-US');
    return {
      name: rule.name,
      target: rule.goal ?? (rule.compare === '=' ? shown : `${rule.compare} ${shown}`),
      value,
      met: (rule.requires?.(measured) ?? true) && holds[rule.compare](value, limit),
    };
  });
}
