// A run's figures: each part's Redis work per action (per job for the baseline), the medians over
// the rounds, and the ratios of the system's path to the raw baseline's.
import { median, ratio } from '../results.js';
import type { KindFigure } from '@pw/test-utils';
import type { Window } from './meter.js';

/** The parts measured: the system's path, then the raw BullMQ baseline's. */
export const SYSTEM_PARTS = ['intake', 'worker', 'recorder'] as const;
export const RAW_PARTS = ['raw_enqueue', 'raw_worker'] as const;
export type Part = (typeof SYSTEM_PARTS)[number] | (typeof RAW_PARTS)[number];

export interface RoundCost {
  webhooks: number;
  /** Action jobs the intake queued; the baseline got one job for each. */
  actions: number;
  windows: Record<Part, Window>;
}

/** One part's work per action, µs and calls. */
export interface PartCost {
  cpu_us: number;
  /** Reads of clients' sockets: Redis's wake-ups for requests, the cost of a round trip. */
  reads: number;
  /** The sum of the top-level commands' time (a script's own commands are inside its EVALSHA). */
  commands: Record<string, { calls: number; us: number }>;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** A window's figures per action (`actions`). */
export function perAction(window: Window, actions: number): PartCost {
  const per = (n: number) => round2(n / Math.max(1, actions));
  const commands: PartCost['commands'] = {};
  const sorted = [...window.commands].sort(([, a], [, b]) => b.usec - a.usec);
  for (const [name, { calls, usec }] of sorted) {
    commands[name] = { calls: per(calls), us: per(usec) };
  }
  return { cpu_us: per(window.cpuMs * 1000), reads: per(window.reads), commands };
}

/** Each figure's median over the rounds; a command a round did not see counts 0 there. */
export function medianCost(costs: readonly PartCost[]): PartCost {
  const names = new Set(costs.flatMap((cost) => Object.keys(cost.commands)));
  const commands: PartCost['commands'] = {};
  for (const name of names) {
    const of = (field: 'calls' | 'us') => median(costs.map((c) => c.commands[name]?.[field] ?? 0));
    commands[name] = { calls: of('calls'), us: of('us') };
  }
  const sorted = Object.entries(commands).sort(([, a], [, b]) => b.us - a.us);
  return {
    cpu_us: median(costs.map((cost) => cost.cpu_us)),
    reads: median(costs.map((cost) => cost.reads)),
    commands: Object.fromEntries(sorted),
  };
}

/** Several parts as one: their calls and times added. */
export function sumCosts(costs: readonly PartCost[]): PartCost {
  const commands: PartCost['commands'] = {};
  for (const cost of costs) {
    for (const [name, { calls, us }] of Object.entries(cost.commands)) {
      const sum = commands[name] ?? { calls: 0, us: 0 };
      commands[name] = { calls: round2(sum.calls + calls), us: round2(sum.us + us) };
    }
  }
  const sorted = Object.entries(commands).sort(([, a], [, b]) => b.us - a.us);
  return {
    cpu_us: round2(costs.reduce((sum, cost) => sum + cost.cpu_us, 0)),
    reads: round2(costs.reduce((sum, cost) => sum + cost.reads, 0)),
    commands: Object.fromEntries(sorted),
  };
}

/** Each part's costs per action in one round. */
export function roundCosts(round: RoundCost): Record<Part, PartCost> {
  const parts = [...SYSTEM_PARTS, ...RAW_PARTS];
  return Object.fromEntries(
    parts.map((part) => [part, perAction(round.windows[part], round.actions)]),
  ) as Record<Part, PartCost>;
}

/** Redis's CPU per action, the system's path over the baseline's, in one round. */
export function cpuRatio(costs: Record<Part, PartCost>): number {
  const system = sumCosts(SYSTEM_PARTS.map((part) => costs[part]));
  const raw = sumCosts(RAW_PARTS.map((part) => costs[part]));
  return ratio(system.cpu_us, raw.cpu_us);
}

/** A kind's keys and bytes per finished webhook (or per job, for the baseline's). */
export interface KindCost {
  keys: number;
  bytes: number;
}

export function perUnit(kinds: ReadonlyMap<string, KindFigure>, units: number) {
  const out: Record<string, KindCost> = {};
  const sorted = [...kinds].sort(([, a], [, b]) => b.bytes - a.bytes);
  for (const [kind, { keys, bytes }] of sorted) {
    out[kind] = {
      keys: Math.round((keys / units) * 1000) / 1000,
      bytes: Math.round(bytes / units),
    };
  }
  return out;
}

/** The median of each kind's figures over the rounds. */
export function medianKinds(rounds: readonly Record<string, KindCost>[]): Record<string, KindCost> {
  const kinds = new Set(rounds.flatMap((one) => Object.keys(one)));
  const out: Record<string, KindCost> = {};
  for (const kind of kinds) {
    out[kind] = {
      keys: median(rounds.map((one) => one[kind]?.keys ?? 0)),
      bytes: median(rounds.map((one) => one[kind]?.bytes ?? 0)),
    };
  }
  return Object.fromEntries(Object.entries(out).sort(([, a], [, b]) => b.bytes - a.bytes));
}

/** The Redis figures `npm run bench` reports (docs/performance.md), of one round. */
export interface RedisFigures {
  /** Redis's CPU per action on the system's path: intake, worker and recorder. */
  redis_cpu_ms_per_action: number;
  /** The same for the raw BullMQ baseline (add, and a worker making the same call), per job. */
  raw_redis_cpu_ms_per_action: number;
  redis_cpu_per_action_vs_raw: number;
  /** Actions one Redis core carries: 1000 / `redis_cpu_ms_per_action`. */
  actions_per_redis_core: number;
  /** Bytes left in Redis per finished webhook after `RECORD_TTL_SECONDS` and the sweep. */
  redis_bytes_per_finished_webhook: number;
}

export function redisFiguresOf(costs: Record<Part, PartCost>, left: KindBytes): RedisFigures {
  const system = sumCosts(SYSTEM_PARTS.map((part) => costs[part])).cpu_us / 1000;
  const raw = sumCosts(RAW_PARTS.map((part) => costs[part])).cpu_us / 1000;
  let bytes = 0;
  for (const { bytes: kind } of left.kinds.values()) bytes += kind;
  return {
    redis_cpu_ms_per_action: Math.round(system * 1000) / 1000,
    raw_redis_cpu_ms_per_action: Math.round(raw * 1000) / 1000,
    redis_cpu_per_action_vs_raw: cpuRatio(costs),
    actions_per_redis_core: system > 0 ? Math.round(1000 / system) : 0,
    redis_bytes_per_finished_webhook: Math.round(bytes / Math.max(1, left.webhooks)),
  };
}

/** What finished webhooks left, by kind, and how many they were. */
export interface KindBytes {
  kinds: ReadonlyMap<string, KindFigure>;
  webhooks: number;
}
