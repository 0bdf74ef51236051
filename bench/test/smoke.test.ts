// The bench's shortest form, in npm test: the round trips, whose pipelines cost a few seconds.
// It asserts no speed: the numbers are the bench's to report, not a test's to judge. The whole
// quick bench, the smallest Redis-cost run and the profiles, each a minute or more of a busy
// machine, are long tests (bench.long.test.ts, `npm run test:long`, after npm test).
import { describe, expect, it } from 'vitest';
import { ChildRun } from '@pw/test-utils';

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
