import { describe, expect, it } from 'vitest';
import { median, medianOf } from './results.js';
import { evaluateTargets } from './targets.js';
import type { Measured } from './targets.js';

/** Results within every goal: only what the targets read. */
function measured(change: (m: Measured) => void = () => undefined): Measured {
  const m = {
    figures: {
      sustained_2000: { accepted_per_s: 1960, p99_ms: 35 },
      paced: { sampled: 200, enqueue_to_start_p50_ms: 2, enqueue_to_start_p99_ms: 10 },
      rss_peak_mb: { ingress_per_process: 120 },
      redis: { redis_bytes_per_finished_webhook: 499 },
      tokens: { requests: 6, worker_processes_started: 3, run_s: 400, token_lifetime_s: 300 },
      flood_unsigned: {
        flood_answers: { many_keys: { 413: 20, 429: 20 }, long_keys: { 401: 20, 429: 20 } },
        legit_failed: 0,
        p99_ratio: 1.5,
      },
    },
    ratios: {
      ingress_cluster_vs_echo: 0.8,
      ingress_single_vs_echo: 0.7,
      ack_p99_vs_echo_p99: 2,
      actions_vs_raw_noop_worker: 0.9,
      actions_vs_raw_http_worker: 0.8,
      two_workers_vs_one: 1.5,
      actions_recording_vs_not: 0.9,
      ingress_tracing_off_vs_plain: 0.9,
      worker_tracing_off_vs_plain: 0.9,
      aof_cost_pct: 9.9,
      redis_cpu_per_action_vs_raw: 1.25,
    },
  } as unknown as Measured;
  change(m);
  return m;
}

const metOf = (m: Measured, name: string) =>
  evaluateTargets(m).find((target) => target.name === name)?.met;

describe('the targets table', () => {
  it('prints each goal from its comparison and limit, or its own words', () => {
    expect(evaluateTargets(measured()).map((target) => target.target)).toEqual([
      '>= 0.8',
      '>= 0.65',
      '<= 2',
      '>= 1,960',
      '<= 35',
      '<= 1.25',
      '< 500',
      '>= 0.7',
      '>= 0.8',
      '>= 1.5',
      '>= 0.9',
      '>= 0.9',
      '>= 0.9',
      '<= 2',
      '<= 10',
      '<= 150',
      '<= 6', // 3 worker processes, each one token per 300 s begun: 400 s is 2
      'all',
      'all past the limit',
      '0',
      '<= 3',
      '< 10',
    ]);
  });

  it('meets every target with results at or within each limit', () => {
    const missed = evaluateTargets(measured()).filter((target) => !target.met);
    expect(missed).toEqual([]);
  });

  it('misses a strict limit reached, and a figure past its limit', () => {
    const m = measured((m) => {
      m.ratios.aof_cost_pct = 10;
      m.figures.sustained_2000.accepted_per_s = 1959;
      m.ratios.actions_vs_raw_http_worker = 0.79;
      m.ratios.two_workers_vs_one = 1.49;
    });
    expect(metOf(m, 'AOF everysec cost on the ingress, %')).toBe(false);
    expect(metOf(m, '2,000/s offered: accepted/s')).toBe(false);
    expect(metOf(m, 'worker vs raw BullMQ worker making the same call')).toBe(false);
    expect(metOf(m, 'two worker processes vs one')).toBe(false);
  });

  it('misses latency targets when no webhook was sampled, whatever the figures say', () => {
    const m = measured((m) => {
      m.figures.paced.sampled = 0;
      m.figures.paced.enqueue_to_start_p50_ms = 0;
      m.figures.paced.enqueue_to_start_p99_ms = 0;
    });
    expect(metOf(m, 'enqueue to first action start p50 ms, paced')).toBe(false);
    expect(metOf(m, 'enqueue to first action start p99 ms, paced')).toBe(false);
  });

  it('counts flood answers other than 401, 413 and 429, and misses when there are none at all', () => {
    const serverError = measured((m) => {
      m.figures.flood_unsigned.flood_answers.long_keys = { 401: 5, 500: 2, 200: 1 };
    });
    const target = evaluateTargets(serverError).find((t) => t.name.startsWith('flood: answered'));
    expect(target).toMatchObject({ value: 3, met: false });
    const none = measured((m) => (m.figures.flood_unsigned.flood_answers = {}));
    expect(metOf(none, 'flood: answered only 401, 413 or 429')).toBe(false);
  });

  it('misses the many-keys target when one such body got past the byte scan', () => {
    const m = measured((m) => {
      m.figures.flood_unsigned.flood_answers.many_keys = { 413: 20, 401: 1 };
    });
    expect(metOf(m, 'flood: many-keys bodies refused 413')).toBe(false);
    expect(metOf(measured(), 'flood: many-keys bodies refused 413')).toBe(true);
  });

  it('misses the flooded p99 target when there is no ratio to judge', () => {
    const m = measured((m) => (m.figures.flood_unsigned.p99_ratio = 0));
    expect(metOf(m, 'flood: legitimate ack p99 vs alone')).toBe(false);
  });
});

describe('medians over rounds', () => {
  it('takes the middle value of an odd count and the mean of the middle two of an even one', () => {
    expect(median([0.9, 0.4, 0.6])).toBe(0.6);
    expect(median([0.4, 0.9, 0.5, 0.6])).toBeCloseTo(0.55, 10);
    // Not rounded: a median of milliseconds keeps its precision, and stays within its range.
    expect(median([0.2843, 0.2848])).toBeCloseTo(0.28455, 10);
    expect(median([])).toBe(0);
  });

  it('replaces each number of nested figures by its median, keeping the shape', () => {
    const rounds = [
      { echo: { accepted_per_s: 100, p99_ms: 9 }, quick: false },
      { echo: { accepted_per_s: 300, p99_ms: 1 }, quick: false },
      { echo: { accepted_per_s: 200, p99_ms: 5 }, quick: false },
    ];
    expect(medianOf(rounds)).toEqual({ echo: { accepted_per_s: 200, p99_ms: 5 }, quick: false });
  });
});

describe("Redis's targets", () => {
  it('miss a ratio past 1.25, and 500 bytes or more per finished webhook', () => {
    const m = measured((m) => {
      m.ratios.redis_cpu_per_action_vs_raw = 1.26;
      m.figures.redis.redis_bytes_per_finished_webhook = 500;
    });
    expect(metOf(m, "Redis's CPU per action vs raw BullMQ's")).toBe(false);
    expect(metOf(m, 'Redis bytes per finished webhook')).toBe(false);
  });
});
