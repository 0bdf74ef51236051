// A short soak passes as a long one does: Redis's memory bound judges what grows with webhooks,
// not the keys bounded whatever the traffic (BullMQ's capped events stream, its queue sets, the
// per-minute counts) nor the sweep's own newest jobs, which a few webhooks would otherwise share.
import { expect, it } from 'vitest';
import { soakToEnd } from './soak-run.js';

it('100 webhooks without faults: exits 0, Redis under 500 bytes per webhook, the bounded kinds apart', async () => {
  const soak = await soakToEnd([
    '--webhooks',
    '100',
    '--rate',
    '25',
    '--faults',
    'none',
    '--record-ttl',
    '3',
  ]);
  expect(soak.code, soak.output.slice(-3000)).toBe(0);
  const report = soak.report!;
  expect(report.findings.acknowledged).toBe(100);
  // Its apps are reachable from this machine alone (and signed with a secret made up for the run).
  expect(report.listening).toEqual(['127.0.0.1']);
  expect(report.redis.bytes_per_webhook).toBeGreaterThan(0);
  expect(report.redis.bytes_per_webhook).toBeLessThan(500);
  // BullMQ's events stream alone outweighs 500 bytes for each of 100 webhooks: counted apart.
  expect(report.redis.grown_by_kind['bullmq events stream']).toBeGreaterThan(100 * 100);
  expect(report.redis.shared_bytes).toBeGreaterThanOrEqual(
    report.redis.grown_by_kind['bullmq events stream']!,
  );
});
