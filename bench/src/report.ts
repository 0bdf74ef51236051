// The bench's readable table, printed from the same object that goes to bench/results.json.

import type { ClusterFigures } from './phases/cluster.js';
import type { Figures, Results } from './results.js';

const n = (value: number) => value.toLocaleString('en-US');

/** `413 x 120, 429 x 80`: answers by status. */
const statuses = (byStatus: Record<string, number> = {}) =>
  Object.entries(byStatus)
    .map(([status, count]) => `${status} x ${n(count)}`)
    .join(', ') || 'none';

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

/** One row per figure of the system and its baselines. */
function figureRows(f: Figures): string[][] {
  return [
    [
      'Express JSON echo',
      `${n(f.echo.accepted_per_s)} req/s, p50 ${f.echo.p50_ms} ms, p99 ${f.echo.p99_ms} ms`,
    ],
    [
      'raw BullMQ',
      `enqueue ${n(f.raw_bullmq.enqueue_per_s)}/s (100 in flight), no-op worker ${n(f.raw_bullmq.noop_worker_jobs_per_s)} jobs/s`,
    ],
    [
      'raw BullMQ worker, same partner call',
      `${n(f.raw_http_worker.jobs_per_s)} jobs/s, CPU ${f.raw_http_worker.cpu_ms_per_job} ms/job, Redis CPU ${f.raw_http_worker.redis_cpu_ms_per_job} ms/job (${n(f.raw_http_worker.jobs)} jobs, ${f.raw_http_worker.actions_per_webhook} per webhook)`,
    ],
    [
      'ingress, 1 process',
      `${n(f.ingress_single.accepted_per_s)} accepted/s, p50 ${f.ingress_single.p50_ms} ms, p99 ${f.ingress_single.p99_ms} ms, ${f.ingress_single.non_2xx} non-2xx, Redis ${f.ingress_single.redis_cpu_pct} % of a core`,
    ],
    [
      `ingress, ${f.ingress_cluster.processes} processes`,
      `${n(f.ingress_cluster.accepted_per_s)} accepted/s, p50 ${f.ingress_cluster.p50_ms} ms, p99 ${f.ingress_cluster.p99_ms} ms, ${f.ingress_cluster.non_2xx} non-2xx, Redis ${f.ingress_cluster.redis_cpu_pct} % of a core`,
    ],
    [
      'worker draining a backlog',
      `${n(f.worker.actions_per_s)} actions/s (${n(f.worker.actions_counted)} in ${f.worker.window_s} s), worker CPU ${f.worker.worker_cpu_ms_per_action} ms/action, Redis CPU ${f.worker.redis_cpu_ms_per_action} ms/action, sandbox CPU ${f.worker.sandbox_cpu_ms_per_action} ms/action`,
    ],
    ['  the same, two worker processes', `${n(f.worker.actions_per_s_two_processes)} actions/s`],
    [
      '  the same, recorder writing to PostgreSQL',
      `${n(f.worker.actions_per_s_recording)} actions/s (${n(f.worker.recorded_changes)} attempts recorded), worker CPU ${f.worker.worker_cpu_ms_per_action_recording} ms/action, recorder CPU ${f.worker.recorder_cpu_ms_per_action} ms/action`,
    ],
    [
      "Redis's cost (private Redis)",
      `${f.redis.redis_cpu_ms_per_action} ms CPU/action (raw BullMQ ${f.redis.raw_redis_cpu_ms_per_action} ms/job), ${n(f.redis.actions_per_redis_core)} actions per Redis core, ${n(f.redis.redis_bytes_per_finished_webhook)} bytes per finished webhook`,
    ],
    [
      'tracing: ingress, 1 process',
      `${n(f.tracing.ingress_plain_per_s)} accepted/s without the bootstrap, ${n(f.tracing.ingress_off_per_s)} off, ${n(f.tracing.ingress_full_per_s)} sampling 100 %, ${n(f.tracing.ingress_tenth_per_s)} sampling 10 %`,
    ],
    [
      'tracing: worker draining',
      `${n(f.tracing.worker_plain_per_s)} actions/s without the bootstrap, ${n(f.tracing.worker_off_per_s)} off, ${n(f.tracing.worker_full_per_s)} sampling 100 %, ${n(f.tracing.worker_tenth_per_s)} sampling 10 % (${n(f.tracing.exports_received)} OTLP exports received)`,
    ],
    [
      '2,000/s offered, worker on',
      `${n(f.sustained_2000.accepted_per_s)} accepted/s, p50 ${f.sustained_2000.p50_ms} ms, p99 ${f.sustained_2000.p99_ms} ms`,
    ],
    [
      `${n(f.paced.offered_per_s)}/s offered, worker on`,
      `${n(f.paced.accepted_per_s)} accepted/s; ${f.paced.sampled} sampled${f.paced.halvings ? ` (rate halved ${f.paced.halvings} time(s) to one the worker sustains)` : ''}`,
    ],
    [
      '  enqueue to first action start',
      `p50 ${f.paced.enqueue_to_start_p50_ms} ms, p99 ${f.paced.enqueue_to_start_p99_ms} ms`,
    ],
    [
      '  ack to first action start',
      `p50 ${f.paced.ack_to_start_p50_ms} ms, p99 ${f.paced.ack_to_start_p99_ms} ms`,
    ],
    [
      '  ack to last action done',
      `p50 ${f.paced.ack_to_done_p50_ms} ms, p99 ${f.paced.ack_to_done_p99_ms} ms`,
    ],
    [
      'peak RSS',
      `ingress ${f.rss_peak_mb.ingress_per_process} MB/process (cluster ${f.rss_peak_mb.ingress_cluster_total} MB), worker ${f.rss_peak_mb.worker} MB, sandbox ${f.rss_peak_mb.sandbox} MB, echo ${f.echo.rss_mb} MB`,
    ],
    [
      'token requests by the workers',
      `${f.tokens.requests} (${f.tokens.worker_processes_started} worker processes, ${f.tokens.run_s} s run, ${f.tokens.token_lifetime_s} s tokens)`,
    ],
    ...aofRows(f),
  ];
}

/** The flood phase's rows. */
function floodRows(fl: Figures['flood_unsigned']): string[][] {
  return [
    [
      `unsigned flood, limit ${fl.rate_limit_per_s}/s`,
      `${fl.flood_offered_per_s}/s offered (${fl.flood_sent_per_s}/s sent, ${fl.flood_past_limit_per_s}/s past the limit), ${n(fl.flood_body_bytes)} bytes, ${fl.flood_errors} errors`,
    ],
    [`  many keys (${n(fl.many_keys_members)})`, statuses(fl.flood_answers.many_keys)],
    [`  long keys (${n(fl.long_keys_members)})`, statuses(fl.flood_answers.long_keys)],
    [
      `  legitimate ${fl.legit_offered_per_s}/s alone`,
      `p50 ${fl.legit_unloaded_p50_ms} ms, p99 ${fl.legit_unloaded_p99_ms} ms, ${fl.legit_unloaded_failed} not 200`,
    ],
    [
      `  legitimate ${fl.legit_offered_per_s}/s, flooded`,
      `p50 ${fl.legit_flood_p50_ms} ms (x ${fl.p50_ratio}), p99 ${fl.legit_flood_p99_ms} ms (x ${fl.p99_ratio}), ${fl.legit_failed} not 200`,
    ],
    [
      '  ingress CPU per request',
      `legitimate ${fl.ingress_cpu_ms_per_legit} ms, many keys ${fl.ingress_cpu_ms_per_many_keys} ms, long keys ${fl.ingress_cpu_ms_per_long_keys} ms`,
    ],
  ];
}

/** Prints the figures, the ratios and the targets as three tables, and the worker's note. */
export function printTable(results: Results): void {
  console.log(formatTable(results));
}

/**
 * The figures, the ratios and the targets as three tables, and the worker's note: what
 * `printTable` prints, and the one run the performance page shows (`npm run docs`).
 */
export function formatTable(results: Results): string {
  const { machine: m, figures: f, ratios: r, ranges } = results;
  const range = (name: string) => {
    const values = (ranges as Record<string, [number, number] | undefined>)[name];
    return values ? `${values[0]} - ${values[1]}` : '';
  };
  const lines = [
    '',
    `${m.cpu}, ${m.cores} cores, Node ${m.node}, Redis ${m.redis}, ${m.date}`,
    `${m.duration_s} s per phase${m.quick ? ' (--quick)' : ''}, ${m.rounds} rounds, ${m.connections} connections, worker concurrency ${m.concurrency}, events of ${m.event_body_bytes_mean} bytes on average`,
    'Figures measured in every round are medians over the rounds; ratios show their range too.',
    '',
    table([['figure', 'value'], ...figureRows(f), ...floodRows(f.flood_unsigned)]),
    '',
    table([
      ['ratio', 'median', 'range over rounds'],
      ...Object.entries(r).map(([name, value]) => [name, String(value), range(name)]),
    ]),
    '',
    table([
      ['target', 'goal', 'value', 'met'],
      ...results.targets.map((t) => [t.name, t.target, String(t.value), t.met ? 'yes' : 'MISS']),
    ]),
    '',
    `Note: ${results.notes.worker}`,
  ];
  return lines.join('\n');
}

/** The cluster phase's figures (`--cluster K`). */
export function printClusterTable(figures: ClusterFigures): void {
  const rows = [
    ['figure', 'value'],
    ['masters', String(figures.masters)],
    ['partitions', String(figures.partitions)],
    ['webhooks accepted', String(figures.webhooks_accepted)],
    ['actions/s (two worker processes)', String(figures.actions_per_s)],
    ['redis_cluster_cpu_shares', figures.redis_cluster_cpu_shares.join(', ')],
    ['acknowledged webhooks not completed (lost)', String(figures.lost)],
  ];
  console.log(['', table(rows), ''].join('\n'));
}

/** What the append-only file costs, with `appendfsync everysec` and with `always`. */
function aofRows(f: Figures): [string, string][] {
  const a = f.aof_everysec;
  return [
    [
      `AOF (appendfsync ${a.appendfsync})`,
      `raw enqueue ${n(a.plain_raw_enqueue_per_s)} -> ${n(a.aof_raw_enqueue_per_s)}/s (${a.raw_enqueue_cost_pct} %), ingress ${n(a.plain_ingress_single_accepted_per_s)} -> ${n(a.aof_ingress_single_accepted_per_s)}/s (${a.ingress_cost_pct} %)`,
    ],
    [
      'AOF (appendfsync always)',
      `raw enqueue ${n(a.plain_raw_enqueue_per_s)} -> ${n(a.always_raw_enqueue_per_s)}/s (${a.always_raw_enqueue_cost_pct} %), ingress ${n(a.plain_ingress_single_accepted_per_s)} -> ${n(a.always_ingress_single_accepted_per_s)}/s (${a.always_ingress_cost_pct} %)`,
    ],
  ];
}
