// The bench's shortest forms, in npm test: the profiles and the round trips. They assert no speed:
// the numbers are the bench's to report, not a test's to judge. The whole quick bench and the
// smallest Redis-cost run are long tests (bench.long.test.ts, `npm run test:long`).
import { describe, expect, it } from 'vitest';
import { ChildRun, testRedisUrl } from '@pw/test-utils';

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
