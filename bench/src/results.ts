// The shape of bench/results.json: each phase fills its group of figures, main.ts the rest.

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
  event_body_bytes_mean: number;
}

type Load = 'accepted_per_s' | 'p50_ms' | 'p99_ms';
type Failures = 'non_2xx' | 'errors';

export interface Figures {
  echo: Record<Load | 'rss_mb', number>;
  raw_bullmq: Record<'enqueue_per_s' | 'noop_worker_jobs_per_s' | 'concurrency', number>;
  ingress_single: Record<Load | Failures | 'rss_mb', number>;
  ingress_cluster: Record<
    'processes' | Load | Failures | 'rss_mb_total' | 'rss_mb_largest_process',
    number
  >;
  worker: Record<
    | 'actions_per_s'
    | 'actions_per_s_recording'
    | 'recorded_changes'
    | 'actions_counted'
    | 'window_s'
    | 'backlog_webhooks'
    | 'concurrency'
    | 'rss_mb',
    number
  >;
  sustained_2000: Record<'offered_per_s' | Load | Failures, number>;
  paced_1000: Record<'offered_per_s' | 'accepted_per_s' | keyof StartLatencies, number>;
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
    | 'ingress_cost_vs_main_run_pct',
    number
  >;
  flood_unsigned: FloodFigures;
}

export interface StartLatencies {
  sampled: number;
  enqueue_to_start_p50_ms: number;
  enqueue_to_start_p99_ms: number;
  ack_to_start_p50_ms: number;
  ack_to_start_p99_ms: number;
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
  | 'actions_recording_vs_not'
  | 'aof_cost_pct'
  | 'flood_legit_p99_vs_unloaded'
  | 'flood_many_keys_cpu_vs_legit'
  | 'flood_long_keys_cpu_vs_legit',
  number
>;

export type Notes = Record<'worker' | 'rss' | 'aof' | 'flood' | 'latency', string>;

export interface Results {
  machine: Machine;
  figures: Figures;
  ratios: Ratios;
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
