// A short soak with a poison burst, then a partner outage during which its front refuses odd paths
// at once: every ordinary action completes after the outage, the partner gets no more calls
// during it than the circuit breaker's bound, the odd paths fail at once and the poison's actions
// end as dead letters, both counted as expected failures.
import { expect, it } from 'vitest';
import { POISON_BURST } from '../src/faults.js';
import { soakToEnd } from './soak-run.js';

/** The actions of one poison event: a quote with status `approved` sets off three. */
const POISON_ACTIONS = POISON_BURST * 3;

it('poison-burst and gateway-404: no ordinary dead letter, the partner spared during the outage, the odd paths and the poison failed as expected', async () => {
  // 60 s of sending: the burst at 3 s (ordinary quotes trickle in until the poison is final), a
  // 10 s outage from 25 s with an odd-path event every 2 s.
  const soak = await soakToEnd([
    '--webhooks',
    '360',
    '--rate',
    '6',
    '--faults',
    'poison-burst,gateway-404',
    '--record-ttl',
    '3',
    '--drain',
    '90',
  ]);
  const report = soak.report!;
  expect(report, soak.output.slice(-12_000)).toBeDefined();
  const { odd_path } = report.sent.fault_events;
  expect(odd_path).toBeGreaterThanOrEqual(3);
  const [stretch, ...others] = report.partner_calls_during_outages.stretches;
  expect(others).toEqual([]);
  // One comparison, so that a failure shows every figure that differs.
  expect(
    {
      fault_events: report.sent.fault_events,
      ordinary_dead_letters_from_outages: report.ordinary_dead_letters_from_outages,
      stretch: { fault: stretch?.fault, within: stretch?.within },
      expected_failures: report.findings.expected_failures,
      lost: report.findings.lost,
      stuck: report.findings.stuck.length,
      effects: report.findings.effects,
      failures: report.failures,
    },
    soak.output.slice(-12_000),
  ).toMatchObject({
    fault_events: { poison: POISON_BURST, odd_path },
    ordinary_dead_letters_from_outages: 0,
    stretch: { fault: 'gateway-404', within: true },
    expected_failures: {
      poison: {
        actions: POISON_ACTIONS,
        dead_letters: POISON_ACTIONS,
        attempts_spent: POISON_ACTIONS,
      },
      refused: { actions: odd_path, first_attempt: odd_path },
    },
    lost: [],
    stuck: 0,
    effects: { missing: [], unexpected: [], duplicate: [] },
    failures: [],
  });
  // An odd path held behind the open circuit may be refused once the outage is over.
  expect(stretch!.ended_at_once).toBeLessThanOrEqual(odd_path);
  expect(soak.code).toBe(0);
});
