// The flood phase's measures, rounded and counted into the figures of results.json.
import { percentile } from '../percentiles.js';
import { ratio, round1 } from '../results.js';
import type { FloodFigures } from '../results.js';
import type { FloodMeasures, FloodSettings } from './flood.js';

export function floodFigures(settings: FloodSettings, measures: FloodMeasures): FloodFigures {
  const { unloaded, loaded, flooded, shapes, cpuMs } = measures;
  const answers = Object.values(flooded.answers).flatMap((byStatus) => Object.entries(byStatus));
  const countAnswers = (which: (status: number) => boolean) =>
    answers.reduce((sum, [status, count]) => sum + (which(Number(status)) ? count : 0), 0);
  const ms = (values: number[], p: number) => round1(percentile(values, p));
  const alone = { p50: ms(unloaded.latenciesMs, 50), p99: ms(unloaded.latenciesMs, 99) };
  const underFlood = { p50: ms(loaded.latenciesMs, 50), p99: ms(loaded.latenciesMs, 99) };
  return {
    rate_limit_per_s: settings.rateLimit,
    ingress_processes: 1,
    flood_body_bytes: settings.bodyBytes,
    many_keys_members: shapes[0].members,
    long_keys_members: shapes[1].members,
    flood_connections: settings.connections,
    flood_offered_per_s: settings.offeredPerSecond,
    flood_sent_per_s: Math.round(flooded.sent / flooded.seconds),
    flood_past_limit_per_s: Math.round(countAnswers((status) => status !== 429) / flooded.seconds),
    flood_skipped: flooded.skipped,
    flood_errors: flooded.errors,
    flood_answers: flooded.answers,
    legit_offered_per_s: settings.legitRate,
    legit_unloaded_p50_ms: alone.p50,
    legit_unloaded_p99_ms: alone.p99,
    legit_unloaded_failed: unloaded.non200 + unloaded.errors,
    legit_flood_p50_ms: underFlood.p50,
    legit_flood_p99_ms: underFlood.p99,
    legit_failed: loaded.non200 + loaded.errors,
    p50_ratio: ratio(underFlood.p50, alone.p50),
    p99_ratio: ratio(underFlood.p99, alone.p99),
    ingress_cpu_ms_per_legit: round1(cpuMs.legit),
    ingress_cpu_ms_per_many_keys: round1(cpuMs.manyKeys),
    ingress_cpu_ms_per_long_keys: round1(cpuMs.longKeys),
  };
}
