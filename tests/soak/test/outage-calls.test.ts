// The partner's calls during an outage stretch are judged against the breaker's bound: the
// threshold, one probe per interval and one more per target, plus the calls already in flight;
// the calls that ended an action at once are counted apart, and calls outside the stretch not at all.
import { describe, expect, it } from 'vitest';
import type { RecordedCall } from '@pw/sandbox';
import type { FaultRecord } from '../src/faults.js';
import { outageCalls } from '../src/outage-calls.js';

const FROM = Date.parse('2026-11-26T10:00:00Z');

const call = (offsetMs: number, status: number): RecordedCall => ({
  method: 'POST',
  path: '/x',
  headers: {},
  body: {},
  status,
  received_at: new Date(FROM + offsetMs),
  at: new Date(FROM + offsetMs),
});

const stretch = (fault: FaultRecord['fault'], ms: number): FaultRecord => ({
  fault,
  started_at: new Date(FROM).toISOString(),
  ended_at: new Date(FROM + ms).toISOString(),
  detail: '',
  stretch: { from: new Date(FROM).toISOString(), until: new Date(FROM + ms).toISOString(), ms },
});

const settings = {
  targets: 1,
  workers: 2,
  WORKER_CONCURRENCY: 3,
  CIRCUIT_FAILURE_THRESHOLD: 5,
  CIRCUIT_PROBE_INTERVAL_MS: 1000,
};

describe('the partner’s calls during outages', () => {
  it('bounds a 4.5 s stretch at 5 failures + 6 probes + 6 in flight, the 404s apart', () => {
    const calls = [
      call(-1, 200),
      ...Array.from({ length: 17 }, (_, n) => call(n * 200, 503)),
      call(1500, 404),
      call(2500, 404),
      call(4500, 200),
    ];
    const [judged] = outageCalls([stretch('gateway-404', 4500)], calls, settings).stretches;
    expect(judged).toMatchObject({
      calls: 17,
      ended_at_once: 2,
      by_status: { 503: 17, 404: 2 },
      bound: 17,
      bound_parts: { failures: 5, probes: 6, in_flight: 6 },
      within: true,
    });
  });

  it('finds a stretch over its bound, and judges only the faults that were outages', () => {
    const calls = Array.from({ length: 18 }, (_, n) => call(n * 100, 0));
    const faults: FaultRecord[] = [
      { ...stretch('kill-worker', 0), stretch: undefined },
      stretch('partner-reset', 4500),
    ];
    const { stretches } = outageCalls(faults, calls, settings);
    expect(stretches.map((s) => [s.fault, s.calls, s.within])).toEqual([
      ['partner-reset', 18, false],
    ]);
  });
});
