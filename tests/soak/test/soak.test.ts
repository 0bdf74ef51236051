// The soak of npm test: 60 seconds of traffic with every fault once (`npm run soak`, shortened
// outages), then the checks from the outside. The long run is published in docs/reliability.md.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChildRun, testDatabaseUrl } from '@pw/test-utils';
import { FAULTS } from '../src/faults.js';
import type { SoakReport } from '../src/main.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pw-soak-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('sends for 60 s through every fault and loses nothing, applies every partner effect once, balances the ledger', async () => {
  const file = join(dir, 'report.json');
  const args = ['--webhooks', '1200', '--rate', '20', '--record-ttl', '10', '--report', file];
  const soak = ChildRun.start(
    [process.execPath, '--import', 'tsx', 'tests/soak/src/main.ts', ...args],
    { DATABASE_URL: testDatabaseUrl() },
    { name: 'soak', killAfterMs: 30_000 },
  );
  const code = await soak.exited;
  expect(code, soak.output.slice(-4000)).toBe(0);
  const report = JSON.parse(await readFile(file, 'utf8')) as SoakReport;
  expect(report.passed).toBe(true);
  expect(new Set(report.faults.map((fault) => fault.fault))).toEqual(new Set(FAULTS));
  expect(report.options.fsync).toBe('always');
  expect(report.sent).toMatchObject({ events: 1200, unacknowledged: 0 });
  expect(report.findings).toMatchObject({
    acknowledged: 1200,
    lost: [],
    stuck: [],
    failed: [],
    redelivered_as_new: [],
    effects: { missing: [], unexpected: [], duplicate: [] },
  });
  expect(report.findings.quarantined).toBeGreaterThan(0);
  expect(report.findings.effects.applied).toBe(report.findings.effects.expected);
  expect(report.findings.stale_older).toBe(report.findings.older);
  expect(report.ledger.balanced).toBe(true);
  expect(report.redis.bytes_per_webhook).toBeLessThan(500);
  expect(soak.output).toContain('PASSED');
});
