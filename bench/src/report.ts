// The bench's readable table, printed from the same object that goes to bench/results.json.

export interface Target {
  name: string;
  target: string;
  value: number;
  met: boolean;
}

export interface Results {
  machine: {
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
  };
  figures: {
    echo: Record<'accepted_per_s' | 'p50_ms' | 'p99_ms' | 'rss_mb', number>;
    raw_bullmq: Record<'enqueue_per_s' | 'noop_worker_jobs_per_s' | 'concurrency', number>;
    ingress_single: Record<'accepted_per_s' | 'p50_ms' | 'p99_ms' | 'non_2xx' | 'errors', number>;
    ingress_cluster: Record<
      'processes' | 'accepted_per_s' | 'p50_ms' | 'p99_ms' | 'non_2xx' | 'errors',
      number
    >;
    worker: Record<'actions_per_s' | 'actions_counted' | 'window_s' | 'concurrency', number>;
    sustained_2000: Record<'offered_per_s' | 'accepted_per_s' | 'p50_ms' | 'p99_ms', number>;
    paced_1000: Record<
      | 'offered_per_s'
      | 'accepted_per_s'
      | 'sampled'
      | 'enqueue_to_start_p50_ms'
      | 'enqueue_to_start_p99_ms'
      | 'ack_to_start_p50_ms'
      | 'ack_to_start_p99_ms',
      number
    >;
    rss_peak_mb: Record<
      'ingress_per_process' | 'ingress_cluster_total' | 'worker' | 'sandbox',
      number
    >;
    tokens: Record<'requests' | 'worker_processes_started' | 'token_lifetime_s' | 'run_s', number>;
    aof_everysec: Record<
      | 'plain_raw_enqueue_per_s'
      | 'aof_raw_enqueue_per_s'
      | 'plain_ingress_single_accepted_per_s'
      | 'aof_ingress_single_accepted_per_s'
      | 'raw_enqueue_cost_pct'
      | 'ingress_cost_pct'
      | 'ingress_cost_vs_main_run_pct',
      number
    > & { appendfsync: string };
  };
  ratios: Record<string, number>;
  targets: Target[];
  notes: Record<string, string>;
}

const n = (value: number) => value.toLocaleString('en-US');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function printTable(results: Results): void {
  const { machine: m, figures: f, ratios: r } = results;
  const lines = [
    '',
    `${m.cpu}, ${m.cores} cores, Node ${m.node}, Redis ${m.redis}, ${m.date}`,
    `${m.duration_s} s per phase${m.quick ? ' (--quick)' : ''}, ${m.connections} connections, worker concurrency ${m.concurrency}, events of ${m.event_body_bytes_mean} bytes on average`,
    '',
    table([
      ['figure', 'value'],
      [
        'Express JSON echo',
        `${n(f.echo.accepted_per_s)} req/s, p50 ${f.echo.p50_ms} ms, p99 ${f.echo.p99_ms} ms`,
      ],
      [
        'raw BullMQ',
        `enqueue ${n(f.raw_bullmq.enqueue_per_s)}/s (100 in flight), no-op worker ${n(f.raw_bullmq.noop_worker_jobs_per_s)} jobs/s`,
      ],
      [
        'ingress, 1 process',
        `${n(f.ingress_single.accepted_per_s)} accepted/s, p50 ${f.ingress_single.p50_ms} ms, p99 ${f.ingress_single.p99_ms} ms, ${f.ingress_single.non_2xx} non-2xx`,
      ],
      [
        `ingress, ${f.ingress_cluster.processes} processes`,
        `${n(f.ingress_cluster.accepted_per_s)} accepted/s, p50 ${f.ingress_cluster.p50_ms} ms, p99 ${f.ingress_cluster.p99_ms} ms, ${f.ingress_cluster.non_2xx} non-2xx`,
      ],
      [
        'worker draining a backlog',
        `${n(f.worker.actions_per_s)} actions/s (${n(f.worker.actions_counted)} in ${f.worker.window_s} s)`,
      ],
      [
        '2,000/s offered, worker on',
        `${n(f.sustained_2000.accepted_per_s)} accepted/s, p50 ${f.sustained_2000.p50_ms} ms, p99 ${f.sustained_2000.p99_ms} ms`,
      ],
      [
        '1,000/s offered, worker on',
        `${n(f.paced_1000.accepted_per_s)} accepted/s; ${f.paced_1000.sampled} sampled`,
      ],
      [
        '  enqueue to action start',
        `p50 ${f.paced_1000.enqueue_to_start_p50_ms} ms, p99 ${f.paced_1000.enqueue_to_start_p99_ms} ms`,
      ],
      [
        '  ack to action start',
        `p50 ${f.paced_1000.ack_to_start_p50_ms} ms, p99 ${f.paced_1000.ack_to_start_p99_ms} ms`,
      ],
      [
        'peak RSS',
        `ingress ${f.rss_peak_mb.ingress_per_process} MB/process (cluster ${f.rss_peak_mb.ingress_cluster_total} MB), worker ${f.rss_peak_mb.worker} MB, sandbox ${f.rss_peak_mb.sandbox} MB, echo ${f.echo.rss_mb} MB`,
      ],
      [
        'token requests',
        `${f.tokens.requests} (${f.tokens.worker_processes_started} worker processes, ${f.tokens.run_s} s run, ${f.tokens.token_lifetime_s} s tokens)`,
      ],
      [
        `AOF (appendfsync ${f.aof_everysec.appendfsync})`,
        `raw enqueue ${n(f.aof_everysec.plain_raw_enqueue_per_s)} -> ${n(f.aof_everysec.aof_raw_enqueue_per_s)}/s (${f.aof_everysec.raw_enqueue_cost_pct} %), ingress ${n(f.aof_everysec.plain_ingress_single_accepted_per_s)} -> ${n(f.aof_everysec.aof_ingress_single_accepted_per_s)}/s (${f.aof_everysec.ingress_cost_pct} %)`,
      ],
    ]),
    '',
    table([['ratio', 'value'], ...Object.entries(r).map(([name, value]) => [name, String(value)])]),
    '',
    table([
      ['target', 'goal', 'value', 'met'],
      ...results.targets.map((t) => [t.name, t.target, String(t.value), t.met ? 'yes' : 'MISS']),
    ]),
    '',
    `Note: ${results.notes.worker ?? ''}`,
  ];
  console.log(lines.join('\n'));
}
