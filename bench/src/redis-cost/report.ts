// The run's figures as Markdown tables, the form docs/redis-cost.md carries them in.
import { RAW_PARTS, SYSTEM_PARTS } from './figures.js';
import type { KindCost, Part, PartCost } from './figures.js';

export interface RedisCostResults {
  machine: { cpu: string; cores: number; node: string; redis: string; date: string };
  webhooks_per_round: number;
  actions_per_webhook: number;
  rounds: number;
  record_ttl_seconds: number;
  /** Medians over the rounds, per action (per job for the baseline). */
  parts: Record<Part, PartCost>;
  system: PartCost;
  raw: PartCost;
  /** The median over the rounds of each round's ratio. */
  redis_cpu_per_action_vs_raw: number;
  cpu_us_ranges: Record<Part | 'system' | 'raw', [number, number]>;
  /** The slowlog pass's calls per action sent by clients, by part, EVALSHA by script. */
  top_level_calls: Record<Part, PartCost['commands']>;
  /** The slowlog pass's commands run by each script (`bullmq moveToFinished > HSET`), per action. */
  script_commands: Record<Part, PartCost['commands']>;
  /** Per finished webhook, after RECORD_TTL_SECONDS. */
  memory_per_webhook: Record<string, KindCost>;
  memory_bytes_per_webhook: number;
  /** The same with no webhook after them: BullMQ's clean-up of aged completed jobs not run. */
  memory_per_webhook_before_sweep: Record<string, KindCost>;
  intake_rate: number;
  stream_bytes_per_webhook: { drained: number; recorded: number };
  /** The baseline's finished jobs, per job. */
  raw_memory_per_job: Record<string, KindCost>;
}

const LABELS: Record<Part, string> = {
  intake: 'intake',
  worker: 'worker',
  recorder: 'recorder',
  raw_enqueue: 'raw add',
  raw_worker: 'raw worker',
};

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  const rule = `|${header.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

const n = (value: number | undefined) => (value ? String(value) : '');

function cpuTable(r: RedisCostResults): string {
  const perWebhook = (us: number) => String(Math.round(us * r.actions_per_webhook * 100) / 100);
  const row = (label: string, cost: PartCost, range: [number, number]) => [
    label,
    String(cost.cpu_us),
    `${range[0]}–${range[1]}`,
    perWebhook(cost.cpu_us),
    String(cost.reads),
  ];
  return table(
    [
      'part',
      'Redis CPU µs per action (median)',
      'range over rounds',
      'per webhook',
      'reads per action',
    ],
    [
      ...SYSTEM_PARTS.map((p) => row(LABELS[p], r.parts[p], r.cpu_us_ranges[p])),
      row('**system, in all**', r.system, r.cpu_us_ranges.system),
      ...RAW_PARTS.map((p) => row(LABELS[p], r.parts[p], r.cpu_us_ranges[p])),
      row('**raw BullMQ, in all**', r.raw, r.cpu_us_ranges.raw),
      ['**system / raw**', String(r.redis_cpu_per_action_vs_raw), '', '', ''],
    ],
  );
}

/** Calls and µs per action of each command (or call), one pair of columns per part. */
function commandTable(
  byPart: Record<Part, PartCost['commands']>,
  first: string,
  least = 0.05,
): string {
  const parts = [...SYSTEM_PARTS, ...RAW_PARTS];
  const total = (name: string) => parts.reduce((sum, p) => sum + (byPart[p][name]?.us ?? 0), 0);
  const names = [...new Set(parts.flatMap((p) => Object.keys(byPart[p])))]
    .filter((name) => parts.some((p) => (byPart[p][name]?.calls ?? 0) >= least))
    .sort((a, b) => total(b) - total(a));
  const header = [first, ...parts.flatMap((p) => [`${LABELS[p]} calls`, `${LABELS[p]} µs`])];
  const rows = names.map((name) => [
    `\`${name}\``,
    ...parts.flatMap((p) => [n(byPart[p][name]?.calls), n(byPart[p][name]?.us)]),
  ]);
  return table(header, rows);
}

function memoryTable(kinds: Record<string, KindCost>, unit: string): string {
  const rows = Object.entries(kinds).map(([kind, { keys, bytes }]) => [
    kind,
    String(keys),
    String(bytes),
  ]);
  const bytes = Object.values(kinds).reduce((sum, kind) => sum + kind.bytes, 0);
  rows.push(['**in all**', '', `**${bytes}**`]);
  return table(['key kind', `keys per ${unit}`, `bytes per ${unit}`], rows);
}

export function formatResults(r: RedisCostResults): string {
  const commands = Object.fromEntries(
    [...SYSTEM_PARTS, ...RAW_PARTS].map((p) => [p, r.parts[p].commands]),
  ) as Record<Part, PartCost['commands']>;
  return [
    `${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}, Redis ${r.machine.redis}, ${r.machine.date}`,
    `${r.rounds} rounds of ${r.webhooks_per_round} webhooks (${r.actions_per_webhook} actions each) at ${r.intake_rate || 'as many as the ingress takes'}/s, RECORD_TTL_SECONDS=${r.record_ttl_seconds}`,
    '',
    cpuTable(r),
    '',
    'Commands per action (INFO commandstats, medians; a script’s own commands counted again under their names):',
    '',
    commandTable(commands, 'command'),
    '',
    'Calls per action sent by clients, scripts by name (slowlog pass: its µs include the log’s own cost; EXEC’s include its commands’):',
    '',
    commandTable(r.top_level_calls, 'call'),
    '',
    `Left in Redis per finished webhook after RECORD_TTL_SECONDS (record stream: ${r.stream_bytes_per_webhook.drained} bytes per webhook once drained, ${r.stream_bytes_per_webhook.recorded} once recorded):`,
    '',
    memoryTable(r.memory_per_webhook, 'webhook'),
    '',
    'The same before any later job completed (BullMQ removes aged completed jobs as others complete):',
    '',
    memoryTable(r.memory_per_webhook_before_sweep, 'webhook'),
    '',
    'The raw baseline’s finished jobs (removeOnComplete: 1 hour), per job:',
    '',
    memoryTable(r.raw_memory_per_job, 'job'),
  ].join('\n');
}
