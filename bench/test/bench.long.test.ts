// Smoke runs of `npm run bench -- --quick`, writing a results file with every figure, and of the
// profiles. They assert no speed: the numbers are the bench's to report, not a test's to judge.
// Long tests (`npm run test:long`, after npm test): npm test runs the bench's shortest forms
// (smoke.test.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildRun, testRedisUrl } from '@pw/test-utils';

/** Figures that are differences of two measurements: a number, but 0 or below is possible. */
const DIFFERENCES = new Set([
  'enqueue_to_start_p50_ms',
  'enqueue_to_start_p99_ms',
  'ack_to_start_p50_ms',
  'ack_to_start_p99_ms',
  'raw_enqueue_cost_pct',
  'ingress_cost_pct',
  'ingress_cost_vs_main_run_pct',
  'aof_cost_pct',
  'always_raw_enqueue_cost_pct',
  'always_ingress_cost_pct',
  // Times the latency phase halved its rate to find one the worker sustains.
  'halvings',
  // Counts of things that should not happen.
  'non_2xx',
  'errors',
  'flood_skipped',
  'flood_errors',
  'legit_unloaded_failed',
  'legit_failed',
]);
/** Figures that are not numbers, checked on their own. */
const NOT_NUMBERS = new Set(['aof_everysec.appendfsync', 'flood_unsigned.flood_answers']);

describe('npm run bench -- --quick', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pw-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every phase and writes a result with a number for each figure', async () => {
    const out = join(dir, 'results.json');
    const run = ChildRun.start(['npm', 'run', '-s', 'bench', '--', '--quick', '--out', out], {
      REDIS_URL: testRedisUrl(),
    });
    expect(await run.exited, run.output).toBe(0);
    const results = JSON.parse(readFileSync(out, 'utf8')) as {
      machine: { cores: number; node: string; redis: string };
      figures: Record<string, Record<string, unknown>>;
      ratios: Record<string, number>;
      ranges: Record<string, [number, number]>;
      targets: { name: string; value: number; met: boolean }[];
    };

    const numbers = [
      ...Object.entries(results.figures).flatMap(([group, values]) =>
        Object.entries(values).map(([name, value]) => [`${group}.${name}`, value] as const),
      ),
      ...Object.entries(results.ratios).map(([name, value]) => [`ratios.${name}`, value] as const),
    ].filter(([name]) => !NOT_NUMBERS.has(name));
    expect(numbers.length).toBeGreaterThan(40);
    for (const [name, value] of numbers) {
      expect(typeof value, name).toBe('number');
      expect(Number.isFinite(value), name).toBe(true);
      if (!DIFFERENCES.has(name.slice(name.indexOf('.') + 1))) {
        expect(value, name).toBeGreaterThan(0);
      }
    }
    expect(results.figures.aof_everysec!.appendfsync).toBe('everysec');
    // The unsigned flood was answered, both shapes, and only with refusals: never 200, never 5xx.
    const floodAnswers = results.figures.flood_unsigned!.flood_answers as Record<
      string,
      Record<string, number>
    >;
    expect(Object.keys(floodAnswers).sort()).toEqual(['long_keys', 'many_keys']);
    for (const [shape, byStatus] of Object.entries(floodAnswers)) {
      const statuses = Object.keys(byStatus).map(Number);
      expect(statuses.length, shape).toBeGreaterThan(0);
      for (const status of statuses) {
        expect(status, `${shape} answered ${status}`).toBeGreaterThanOrEqual(400);
        expect(status, `${shape} answered ${status}`).toBeLessThan(500);
      }
    }
    expect(results.machine.node).toBe(process.version);
    expect(results.machine.cores).toBeGreaterThan(0);
    expect(results.machine.redis).toMatch(/^\d+\.\d+/);
    expect(results.targets.length).toBeGreaterThan(8);
    for (const target of results.targets) expect(typeof target.met, target.name).toBe('boolean');
    // Each ratio measured in every round has its range, around its median.
    expect(Object.keys(results.ranges)).toContain('actions_vs_raw_http_worker');
    for (const [name, [low, high]] of Object.entries(results.ranges)) {
      expect(results.ratios[name], name).toBeGreaterThanOrEqual(low);
      expect(results.ratios[name], name).toBeLessThanOrEqual(high);
    }
    // The readable table went to stdout too.
    expect(run.output).toContain('ingress, one process, vs echo');
  });
});

describe('npm run bench:profile and bench:ingress-flags -- --quick', () => {
  it('profiles the ingress, the raw HTTP worker and ours: self time by part, Redis commands per action', async () => {
    const run = ChildRun.start(['npm', 'run', '-s', 'bench:profile', '--', '--quick'], {
      REDIS_URL: testRedisUrl(),
    });
    expect(await run.exited, run.output).toBe(0);
    expect(run.count('self time by part:'), run.output).toBe(3);
    expect(run.output).toMatch(/^ingress at \d+ webhooks\/s/m);
    expect(run.output).toMatch(/^raw BullMQ worker making the same call, at \d+ jobs\/s/m);
    // Side by side per action: our worker's busy time, and the raw worker's, both measured.
    expect(run.output).toMatch(/^\s+busy\s+[1-9]\d*\s+[1-9]\d*\s+-?\d+$/m);
    expect(run.output).toMatch(/^worker at \d+ actions\/s/m);
    // BullMQ's own script calls, at least one per completed action, and the time inside them.
    expect(run.output).toMatch(/^\s+\d+\.\d\d\s+\d+\.\d µs\s+evalsha$/m);
    expect(run.output).toMatch(
      /^Redis during the drain, per completed action .*: \d+ µs of its CPU/m,
    );
  });

  it('compares the ingress under each set of V8 heap flags: CPU per webhook, rate, peak RSS', async () => {
    const run = ChildRun.start(['npm', 'run', '-s', 'bench:ingress-flags', '--', '--quick'], {
      REDIS_URL: testRedisUrl(),
    });
    expect(await run.exited, run.output).toBe(0);
    const measure = String.raw`(\d+(?:\.\d+)?) \(\d+(?:\.\d+)? - \d+(?:\.\d+)?\)`;
    for (const name of ['shipped', 'v8 defaults', 'old 128, semi 4']) {
      const line = new RegExp(`^${name}\\s+${measure}\\s+${measure}\\s+${measure}$`, 'm').exec(
        run.output,
      );
      expect(line, `${name} in:\n${run.output}`).not.toBeNull();
      for (const value of line!.slice(1)) expect(Number(value), name).toBeGreaterThan(0);
    }
  });
});
