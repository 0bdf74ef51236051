// A smoke run of `npm run bench -- --quick`: it must produce every figure. It asserts no speed:
// the numbers are the bench's to report, not a test's to judge.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChildRun, testRedisUrl } from '@pw/test-utils';

describe('npm run bench -- --quick', () => {
  it('runs every phase and writes a result with a number for each figure', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'pw-bench-')), 'results.json');
    const run = ChildRun.start(['npm', 'run', '-s', 'bench', '--', '--quick', '--out', out], {
      REDIS_URL: testRedisUrl(),
    });
    expect(await run.exited, run.output).toBe(0);
    const results = JSON.parse(readFileSync(out, 'utf8')) as {
      machine: { cores: number; node: string };
      figures: Record<string, Record<string, number>>;
      ratios: Record<string, number>;
      targets: { name: string; value: number; met: boolean }[];
    };
    const { figures } = results;
    for (const value of [
      figures.echo!.accepted_per_s,
      figures.raw_bullmq!.enqueue_per_s,
      figures.raw_bullmq!.noop_worker_jobs_per_s,
      figures.ingress_single!.accepted_per_s,
      figures.ingress_cluster!.accepted_per_s,
      figures.ingress_single!.rss_mb,
      figures.worker!.actions_per_s,
      figures.sustained_2000!.accepted_per_s,
      figures.paced_1000!.sampled,
      figures.tokens!.requests,
      figures.aof_everysec!.raw_enqueue_per_s,
      ...Object.values(results.ratios),
    ]) {
      expect(value).toBeGreaterThan(0);
    }
    expect(results.machine.node).toBe(process.version);
    expect(results.targets.length).toBeGreaterThan(5);
    // The readable table went to stdout too.
    expect(run.output).toContain('ingress, one process, vs echo');
  });
});
