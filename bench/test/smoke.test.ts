// The bench's shortest forms, in npm test: the round trips, whose pipelines cost a few seconds,
// and the smallest Redis-cost run, which writes a complete results file. They assert no speed:
// the numbers are the bench's to report, not a test's to judge. The whole quick bench and the
// profiles, each a minute or more of a busy machine, are long tests (bench.long.test.ts, `npm run
// test:long`, after npm test).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildRun, testDatabaseUrl, testRedisUrl } from '@pw/test-utils';
import { RAW_PARTS, SYSTEM_PARTS } from '../src/redis-cost/figures.js';
import type { RedisCostResults } from '../src/redis-cost/report.js';

describe('npm run bench:round-trips', () => {
  it('gives what each call costs Redis alone and pipelined, and the record change applied', async () => {
    const run = ChildRun.start(
      ['npm', 'run', '-s', 'bench:round-trips', '--', '--calls', '300', '--rounds', '1'],
      {},
    );
    expect(await run.exited, run.output).toBe(0);
    const rows = [...run.output.matchAll(/^\| (.+?) \| ([\d.]+) \| ([\d.]+) \| (-?[\d.]+) \|$/gm)];
    expect(
      rows.map((row) => row[1]),
      run.output,
    ).toEqual([
      'HSET of one field',
      'EVALSHA of a script that does nothing',
      'outcome-change-3.lua, an action completed',
    ]);
    for (const row of rows) {
      // Alone, a call costs Redis something; the difference is the bench's to report.
      expect(Number(row[2]), row[1]).toBeGreaterThan(0);
      expect(Number.isFinite(Number(row[4])), row[1]).toBe(true);
    }
  });
});

describe('npm run bench:redis-cost, its smallest run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pw-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a result with a number for each figure: per part, per command, per kind of key', async () => {
    const out = join(dir, 'redis-cost.json');
    const run = ChildRun.start(
      [
        ...['npm', 'run', '-s', 'bench:redis-cost', '--'],
        ...['--webhooks', '100', '--rounds', '1', '--ttl', '1', '--out', out],
      ],
      { REDIS_URL: testRedisUrl(), DATABASE_URL: testDatabaseUrl() },
    );
    expect(await run.exited, run.output).toBe(0);
    const results = JSON.parse(readFileSync(out, 'utf8')) as RedisCostResults;
    const numbers = leaves(results).filter(([, value]) => typeof value !== 'string');
    expect(numbers.length).toBeGreaterThan(40);
    for (const [name, value] of numbers) {
      expect(typeof value, name).toBe('number');
      expect(Number.isFinite(value), name).toBe(true);
      expect(value, name).toBeGreaterThanOrEqual(0);
    }
    expect(Object.keys(results.parts).sort()).toEqual([...SYSTEM_PARTS, ...RAW_PARTS].sort());
    for (const part of SYSTEM_PARTS) expect(results.parts[part].cpu_us, part).toBeGreaterThan(0);
    expect(results.raw.cpu_us).toBeGreaterThan(0);
    expect(results.redis_cpu_per_action_vs_raw).toBeGreaterThan(0);
    expect(results.memory_bytes_per_webhook).toBeGreaterThan(0);
    expect(results.webhooks_per_round).toBe(100);
    expect(results.machine.node).toBe(process.version);
    // The readable table went to stdout too.
    expect(run.output).toContain(`wrote ${out}`);
  });
});

/** Every leaf of `value` with its path (`parts.worker.cpu_us`). */
function leaves(value: unknown, path = ''): [string, unknown][] {
  if (value === null || typeof value !== 'object') return [[path, value]];
  return Object.entries(value).flatMap(([key, inner]) =>
    leaves(inner, path ? `${path}.${key}` : key),
  );
}
