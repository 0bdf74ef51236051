// The shape of bench/results.json: each phase fills its group of figures, main.ts the rest.
import type { RedisFigures } from './redis-cost/figures.js';

export interface Target {
  name: string;
  /** The goal, as printed. */
  target: string;
  value: number;
  met: boolean;
}

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  redis: string;
  date: string;
  duration_s: number;
  connections: number;
  concurrency: number;
  quick: boolean;
  rounds: number;
  event_body_bytes_mean: number;
}

type Load = 'accepted_per_s' | 'p50_ms' | 'p99_ms';
type Failures = 'non_2xx' | 'errors';

export interface Figures {
  echo: Record<Load | 'rss_mb', number>;
  raw_bullmq: Record<'enqueue_per_s' | 'noop_worker_jobs_per_s' | 'concurrency', number>;
  /** The raw BullMQ worker making the same partner-API call (the worker's fair baseline). */
  raw_http_worker: Record<
    | 'jobs_per_s'
    | 'cpu_ms_per_job'
    | 'redis_cpu_ms_per_job'
    | 'jobs'
    | 'actions_per_webhook'
    | 'concurrency',
    number
  >;
  /** `redis_cpu_pct`: Redis's CPU while the ingress was driven, in % of one core. */
  ingress_single: Record<Load | Failures | 'rss_mb' | 'redis_cpu_pct', number>;
  ingress_cluster: Record<
    'processes' | Load | Failures | 'rss_mb_total' | 'rss_mb_largest_process' | 'redis_cpu_pct',
    number
  >;
  worker: Record<
    | 'actions_per_s'
    | 'actions_per_s_two_processes'
    | 'actions_per_s_recording'
    | 'recorded_changes'
    | 'worker_cpu_ms_per_action'
    | 'worker_cpu_ms_per_action_recording'
    | 'recorder_cpu_ms_per_action'
    | 'redis_cpu_ms_per_action'
    | 'sandbox_cpu_ms_per_action'
    | 'actions_counted'
    | 'window_s'
    | 'backlog_webhooks'
    | 'concurrency'
    | 'rss_mb',
    number
  >;
  sustained_2000: Record<'offered_per_s' | Load | Failures, number>;
  /** Webhooks offered at a rate the worker sustains (`--rate`). */
  paced: Record<'offered_per_s' | 'accepted_per_s' | 'halvings' | keyof StartLatencies, number>;
  rss_peak_mb: Record<
    'ingress_per_process' | 'ingress_cluster_total' | 'worker' | 'sandbox',
    number
  >;
  tokens: Record<
    'requests' | 'partner_api_calls' | 'worker_processes_started' | 'token_lifetime_s' | 'run_s',
    number
  >;
  aof_everysec: { appendfsync: string } & Record<
    | 'plain_raw_enqueue_per_s'
    | 'aof_raw_enqueue_per_s'
    | 'plain_ingress_single_accepted_per_s'
    | 'aof_ingress_single_accepted_per_s'
    | 'raw_enqueue_cost_pct'
    | 'ingress_cost_pct'
    | 'ingress_cost_vs_main_run_pct'
    | 'always_raw_enqueue_per_s'
    | 'always_ingress_single_accepted_per_s'
    | 'always_raw_enqueue_cost_pct'
    | 'always_ingress_cost_pct',
    number
  >;
  flood_unsigned: FloodFigures;
  /**
   * Redis's own cost on a private Redis (docs/redis-cost.md): CPU per action, the system's and the
   * raw baseline's, and the bytes a finished webhook leaves; the ratio is in `Ratios`.
   */
  redis: Omit<RedisFigures, RedisRatio>;
  /** Accepted webhooks/s (one ingress process) and drained actions/s, by tracing mode. */
  tracing: Record<
    | 'ingress_plain_per_s'
    | 'ingress_off_per_s'
    | 'ingress_full_per_s'
    | 'ingress_tenth_per_s'
    | 'worker_plain_per_s'
    | 'worker_off_per_s'
    | 'worker_full_per_s'
    | 'worker_tenth_per_s'
    | 'exports_received',
    number
  >;
}

export interface StartLatencies {
  sampled: number;
  enqueue_to_start_p50_ms: number;
  enqueue_to_start_p99_ms: number;
  ack_to_start_p50_ms: number;
  ack_to_start_p99_ms: number;
  /** From the ack to the completion of the webhook's last action. */
  ack_to_done_p50_ms: number;
  ack_to_done_p99_ms: number;
}

export type FloodFigures = Record<
  | 'rate_limit_per_s'
  | 'ingress_processes'
  | 'flood_body_bytes'
  | 'many_keys_members'
  | 'long_keys_members'
  | 'flood_connections'
  | 'flood_offered_per_s'
  | 'flood_sent_per_s'
  | 'flood_past_limit_per_s'
  | 'flood_skipped'
  | 'flood_errors'
  | 'legit_offered_per_s'
  | 'legit_unloaded_p50_ms'
  | 'legit_unloaded_p99_ms'
  | 'legit_unloaded_failed'
  | 'legit_flood_p50_ms'
  | 'legit_flood_p99_ms'
  | 'legit_failed'
  | 'p50_ratio'
  | 'p99_ratio'
  | 'ingress_cpu_ms_per_legit'
  | 'ingress_cpu_ms_per_many_keys'
  | 'ingress_cpu_ms_per_long_keys',
  number
> & {
  /** Answers to the flood by body shape, then by status code. */
  flood_answers: Record<string, Record<string, number>>;
};

export type Ratios = Record<
  | 'ingress_single_vs_echo'
  | 'ingress_cluster_vs_echo'
  | 'ack_p99_vs_echo_p99'
  | 'ack_p99_single_vs_echo_p99'
  | 'actions_vs_raw_noop_worker'
  | 'actions_vs_raw_http_worker'
  | 'two_workers_vs_one'
  | 'two_workers_ceiling'
  | 'actions_recording_vs_not'
  | 'ingress_tracing_off_vs_plain'
  | 'ingress_tracing_full_vs_off'
  | 'ingress_tracing_tenth_vs_off'
  | 'worker_tracing_off_vs_plain'
  | 'worker_tracing_full_vs_off'
  | 'worker_tracing_tenth_vs_off'
  | 'aof_cost_pct'
  | 'flood_legit_p99_vs_unloaded'
  | 'flood_many_keys_cpu_vs_legit'
  | 'flood_long_keys_cpu_vs_legit'
  | 'redis_cpu_per_action_vs_raw',
  number
>;

export type Notes = Record<'worker' | 'rss' | 'aof' | 'flood' | 'latency', string>;

/** The figures measured again in each round, interleaved so that each ratio compares neighbours. */
export type RoundFigures = Pick<
  Figures,
  'echo' | 'raw_bullmq' | 'raw_http_worker' | 'ingress_single' | 'ingress_cluster' | 'worker'
>;

/** The ratios computed in each round; the results give their median and range. */
export const ROUND_RATIOS = [
  'ingress_single_vs_echo',
  'ingress_cluster_vs_echo',
  'ack_p99_vs_echo_p99',
  'ack_p99_single_vs_echo_p99',
  'actions_vs_raw_noop_worker',
  'actions_vs_raw_http_worker',
  'two_workers_vs_one',
  'two_workers_ceiling',
  'actions_recording_vs_not',
] as const satisfies readonly (keyof Ratios)[];
export type RoundRatio = (typeof ROUND_RATIOS)[number];

/** The ratios of each round of the tracing phase; the results give their median and range. */
export const TRACING_RATIOS = [
  'ingress_tracing_off_vs_plain',
  'ingress_tracing_full_vs_off',
  'ingress_tracing_tenth_vs_off',
  'worker_tracing_off_vs_plain',
  'worker_tracing_full_vs_off',
  'worker_tracing_tenth_vs_off',
] as const satisfies readonly (keyof Ratios)[];
export type TracingRatio = (typeof TRACING_RATIOS)[number];

/** The ratio of each round of the Redis cost phase; the results give its median and range. */
export const REDIS_RATIOS = [
  'redis_cpu_per_action_vs_raw',
] as const satisfies readonly (keyof Ratios & keyof RedisFigures)[];
export type RedisRatio = (typeof REDIS_RATIOS)[number];

export interface Results {
  machine: Machine;
  /** Medians over the rounds for the round figures and tracing's; one measure for the others. */
  figures: Figures;
  /** Medians over the rounds for the round ratios. */
  ratios: Ratios;
  /** Lowest and highest value over the rounds of each round ratio. */
  ranges: Record<RoundRatio | TracingRatio | RedisRatio, [number, number]>;
  rounds: { figures: RoundFigures; ratios: Pick<Ratios, RoundRatio> }[];
  tracing_rounds: { figures: Figures['tracing']; ratios: Pick<Ratios, TracingRatio> }[];
  redis_rounds: RedisFigures[];
  targets: Target[];
  notes: Notes;
}

/** `a / b` to two decimals; 0 when there is no `b` to compare with. */
export function ratio(a: number, b: number): number {
  return b > 0 ? Math.round((a / b) * 100) / 100 : 0;
}

/** To one decimal. */
export function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The median of `values` (the mean of the middle two for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Each number of `records` (objects of the same shape, nested) replaced by its median. */
export function medianOf<T extends object>(records: readonly T[]): T {
  const first = records[0];
  if (first === undefined) throw new Error('medianOf: no records');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(first)) {
    const values = records.map((record) => (record as Record<string, unknown>)[key]);
    out[key] =
      typeof value === 'number'
        ? median(values as number[])
        : value !== null && typeof value === 'object' && !Array.isArray(value)
          ? medianOf(values as object[])
          : value;
  }
  return out as T;
}

/**
 * The most any number of worker processes could drain over one, were CPU the only bound: the
 * machine's cores over what one action costs the worker, Redis and the sandbox together, over the
 * rate one worker drained. Below 1.5, the two-worker target cannot be shown on this machine.
 */
export function twoWorkersCeiling(worker: Figures['worker'], cores: number): number {
  const cpuMsPerAction =
    worker.worker_cpu_ms_per_action +
    worker.redis_cpu_ms_per_action +
    worker.sandbox_cpu_ms_per_action;
  return ratio((cores * 1000) / Math.max(0.001, cpuMsPerAction), worker.actions_per_s);
}
