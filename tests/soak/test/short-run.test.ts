// A short soak passes as a long one does: Redis's memory bound judges what grows with webhooks,
// not the keys bounded whatever the traffic (BullMQ's capped events stream, its queue sets, the
// per-minute counts) nor the sweep's own newest jobs, which a few webhooks would otherwise share.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChildRun, testDatabaseUrl } from '@pw/test-utils';
import type { SoakReport } from '../src/main.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pw-soak-short-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('100 webhooks without faults: exits 0, Redis under 500 bytes per webhook, the bounded kinds apart', async () => {
  const file = join(dir, 'report.json');
  const args = ['--webhooks', '100', '--rate', '25', '--faults', 'none', '--record-ttl', '3'];
  const soak = ChildRun.start(
    [process.execPath, '--import', 'tsx', 'tests/soak/src/main.ts', ...args, '--report', file],
    { DATABASE_URL: testDatabaseUrl() },
    { name: 'soak', killAfterMs: 30_000 },
  );
  expect(await soak.exited, soak.output.slice(-3000)).toBe(0);
  const report = JSON.parse(await readFile(file, 'utf8')) as SoakReport;
  expect(report.findings.acknowledged).toBe(100);
  expect(report.redis.bytes_per_webhook).toBeGreaterThan(0);
  expect(report.redis.bytes_per_webhook).toBeLessThan(500);
  // BullMQ's events stream alone outweighs 500 bytes for each of 100 webhooks: counted apart.
  expect(report.redis.grown_by_kind['bullmq events stream']).toBeGreaterThan(100 * 100);
  expect(report.redis.shared_bytes).toBeGreaterThanOrEqual(
    report.redis.grown_by_kind['bullmq events stream']!,
  );
});
