// The soak in npm test: 60 seconds of traffic with every fault once (`npm run soak`, shortened
// outages), then the checks from the outside. The long run (half an hour) is published in
// docs/reliability-and-security.md.
import { expect, it } from 'vitest';
import { FAULTS } from '../src/faults.js';
import { soakToEnd } from './soak-run.js';

// The breaker's own faults (`poison-burst`, `gateway-404`) have a soak of their own
// (outage-faults.test.ts): in 60 s beside every other fault, 40 poison quotes retried 30 times
// each and their trickle of ordinary quotes overload this machine's run.
const FAULTS_HERE = FAULTS.filter((fault) => fault !== 'poison-burst' && fault !== 'gateway-404');

it('sends for 60 s through every fault and loses nothing, applies every partner effect once, balances the ledger', async () => {
  const soak = await soakToEnd([
    ...['--webhooks', '1200', '--rate', '20', '--record-ttl', '10'],
    ...['--faults', FAULTS_HERE.join(',')],
  ]);
  expect(soak.code, soak.output.slice(-12_000)).toBe(0);
  const report = soak.report!;
  expect(report.passed).toBe(true);
  expect(new Set(report.faults.map((fault) => fault.fault))).toEqual(new Set(FAULTS_HERE));
  expect(report.options.fsync).toBe('always');
  const { poison, odd_path, trickle, burst } = report.sent.fault_events;
  expect(burst).toBeGreaterThan(0);
  expect(report.sent).toMatchObject({
    events: 1200 + poison + odd_path + trickle + burst,
    unacknowledged: 0,
  });
  expect(report.ordinary_dead_letters_from_outages).toBe(0);
  expect(report.partner_calls_during_outages.stretches.filter((s) => !s.within)).toEqual([]);
  expect(report.findings).toMatchObject({
    acknowledged: report.sent.events,
    lost: [],
    stuck: [],
    failed: [],
    redelivered_as_new: [],
    effects: { missing: [], unexpected: [], duplicate: [] },
  });
  expect(report.findings.quarantined).toBeGreaterThan(0);
  expect(report.findings.effects.applied).toBe(report.findings.effects.expected);
  expect(report.findings.stale_older).toBe(report.findings.older);
  // Every entity's state-changing calls one at a time, the last its newest event's.
  expect(report.findings.order).toMatchObject({ backwards: [], overlapping: [] });
  expect(report.findings.order.entities).toBeGreaterThan(0);
  expect(report.ledger.balanced).toBe(true);
  expect(report.redis.bytes_per_webhook).toBeLessThan(500);
  expect(soak.output).toContain('PASSED');
});
