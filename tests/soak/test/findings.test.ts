// The soak's checks find what they are for: an acknowledged webhook the store never got, one left
// unfinished, a partner effect missing, one applied for an action that was skipped, one event run
// under two webhook ids, and calls repeated after a lost answer (counted apart, not as effects);
// the poison's dead letters and the odd paths refused at once are expected, any other is not.
import { describe, expect, it } from 'vitest';
import type { RecordedCall } from '@pw/sandbox';
import { sampleEvent } from '@pw/shared/events';
import { findings, percentiles } from '../src/checks.js';
import { orderFindings } from '../src/order-check.js';
import type { Store } from '../src/checks.js';
import type { Ack, Delivery, Purpose } from '../src/traffic.js';

/** An acknowledgement of a request sent at `sentAt` (ms), answered 5 ms later. */
const ack = (webhookId: string, sentAt = 100): Ack => ({
  status: 200,
  webhook_id: webhookId,
  actions: ['notify'],
  quarantined: false,
  latencyMs: 5,
  sentAt,
  ackedAt: sentAt + 5,
});

/** The apps' `ACTION_ATTEMPTS` as the findings are told it. */
const ATTEMPTS = 30;

const delivery = (id: number, first: Ack, purpose: Purpose = 'plain', again: Ack[] = []) =>
  ({
    event: { id, kind: 'quote', purpose, path: '/webhooks/quote-status', body: '{}' },
    ack: first,
    tries: 1,
    redeliveries: again,
  }) satisfies Delivery;

const call = (key: string, status = 200, path = '/x') =>
  ({
    method: 'POST',
    path,
    headers: { 'idempotency-key': key },
    body: {},
    status,
    received_at: new Date(),
    at: new Date(),
  }) satisfies RecordedCall;

/** An action row: its name, state, why it was skipped, and its attempts (1 unless given). */
type ActionRow = [name: string, state: string, skipped: string | null, attempts?: number];

function store(rows: [id: string, state: string, actions: ActionRow[], stale?: boolean][]): Store {
  const at = new Date('2026-11-26T10:00:00Z');
  return {
    webhooks: new Map(
      rows.map(([webhook_id, state, , stale]) => [
        webhook_id,
        { webhook_id, state, stale: stale ?? false, received_at: at },
      ]),
    ),
    actions: rows.flatMap(([webhook_id, , actions]) =>
      actions.map(([name, state, skipped, attempts]) => ({
        webhook_id,
        name,
        state,
        attempts: attempts ?? 1,
        skipped,
        last_error: state === 'failed' ? 'http_503' : null,
        completed_at: state === 'completed' ? new Date(at.getTime() + 40) : null,
      })),
    ),
  };
}

describe('the soak’s findings', () => {
  it('a clean run: every effect applied once; a call repeated after a lost answer is not an effect', () => {
    const found = findings(
      [delivery(0, ack('wh_a', 0), 'newer', [ack('wh_a')]), delivery(1, ack('wh_b', 100), 'older')],
      store([
        ['wh_a', 'completed', [['notify', 'completed', null]]],
        ['wh_b', 'completed', [['notify', 'completed', 'stale']], true],
      ]),
      [call('wh_a:notify'), call('wh_a:notify'), call('wh_a:notify', 503)],
      ATTEMPTS,
    );
    expect(found).toMatchObject({
      acknowledged: 2,
      lost: [],
      stuck: [],
      failed: [],
      redeliveries: 1,
      redelivered_as_new: [],
      stale_older: 1,
      older: 1,
      effects: {
        expected: 1,
        applied: 1,
        missing: [],
        unexpected: [],
        duplicate: [],
        repeated_calls: 1,
      },
    });
  });
});

describe('the soak’s findings of failures', () => {
  it('finds lost, stuck and failed webhooks, missing and unexpected effects, and an event run twice', () => {
    const found = findings(
      [
        delivery(0, ack('wh_lost')),
        delivery(1, ack('wh_stuck')),
        delivery(2, ack('wh_failed')),
        delivery(3, ack('wh_missing')),
        delivery(4, ack('wh_skipped', 200), 'older'),
        delivery(5, ack('wh_first'), 'plain', [ack('wh_second')]),
      ],
      store([
        ['wh_stuck', 'processing', [['notify', 'retrying', null]]],
        ['wh_failed', 'failed', [['notify', 'failed', null]]],
        ['wh_missing', 'completed', [['notify', 'completed', null]]],
        ['wh_skipped', 'completed', [['notify', 'completed', 'stale']], false],
        ['wh_first', 'completed', [['notify', 'completed', null]]],
      ]),
      [call('wh_skipped:notify'), call('wh_first:notify'), call('wh_second:notify')],
      ATTEMPTS,
    );
    expect(found.lost).toEqual(['wh_lost']);
    expect(found.stuck).toEqual(['wh_stuck']);
    expect(found.stuck_by_purpose).toEqual({ plain: 1 });
    expect(found.failed).toEqual([
      { webhook_id: 'wh_failed', action: 'notify', error: 'http_503' },
    ]);
    expect(found.effects.missing).toEqual(['wh_missing:notify']);
    expect(found.effects.unexpected.sort()).toEqual(['wh_second:notify', 'wh_skipped:notify']);
    expect(found.effects.duplicate).toEqual(['wh_first wh_second']);
    expect(found.redelivered_as_new).toEqual([5]);
    expect([found.stale_older, found.older]).toEqual([0, 1]);
  });

  it('expects an older event to be stale only when its entity’s newer one was acknowledged before it was sent', () => {
    const found = findings(
      [delivery(0, ack('wh_newer', 300), 'newer'), delivery(1, ack('wh_older', 100), 'older')],
      store([
        ['wh_newer', 'completed', []],
        ['wh_older', 'completed', [], false],
      ]),
      [],
      ATTEMPTS,
    );
    expect([found.stale_older, found.older]).toEqual([0, 0]);
  });

  it('gives latency percentiles by rank', () => {
    expect(percentiles([5, 1, 4, 2, 3, 10, 6, 7, 8, 9])).toEqual({
      p50: 5,
      p95: 10,
      p99: 10,
      max: 10,
    });
    expect(percentiles([])).toEqual({ p50: null, p95: null, p99: null, max: null });
  });
});

describe('the soak’s expected failures', () => {
  it('counts the poison’s dead letters and the odd paths refused at once apart from ordinary dead letters', () => {
    const found = findings(
      [
        delivery(0, ack('wh_poison'), 'poison'),
        delivery(1, ack('wh_odd'), 'odd-path'),
        delivery(2, ack('wh_odd_held'), 'odd-path'),
        delivery(3, ack('wh_plain')),
      ],
      store([
        [
          'wh_poison',
          'failed',
          [
            ['notify', 'failed', null, ATTEMPTS],
            ['lock', 'failed', null, 4],
          ],
        ],
        [
          'wh_odd',
          'failed',
          [
            ['notify', 'failed', null],
            ['lock', 'completed', null],
          ],
        ],
        ['wh_odd_held', 'failed', [['lock', 'failed', null, ATTEMPTS]]],
        ['wh_plain', 'failed', [['notify', 'failed', null, ATTEMPTS]]],
      ]),
      [
        call('wh_poison:notify', 500),
        call('wh_odd:notify', 404, '/customers/C-odd%2F1/notifications'),
        call('wh_odd:lock', 503),
        call('wh_odd:lock'),
        call('wh_odd_held:lock', 503),
        call('wh_plain:notify', 503),
      ],
      ATTEMPTS,
    );
    expect(found.expected_failures).toEqual({
      poison: { actions: 2, dead_letters: 2, attempts_spent: 1 },
      refused: { actions: 1, first_attempt: 1 },
    });
    // An odd-path event's other actions are ordinary: held through the outage, they must complete.
    expect(found.failed).toEqual([
      { webhook_id: 'wh_odd_held', action: 'lock', error: 'http_503' },
      { webhook_id: 'wh_plain', action: 'notify', error: 'http_503' },
    ]);
    expect(found.effects).toMatchObject({ expected: 1, applied: 1, missing: [], unexpected: [] });
  });
});

describe('the order check', () => {
  const at = (ms: number) => new Date(1_800_000_000_000 + ms);
  /** An acknowledged quote event of `quote`, dated `dated` ms, as webhook `webhookId`. */
  const quoteEvent = (id: number, webhookId: string, dated: number): Delivery => ({
    ...delivery(id, ack(webhookId)),
    event: {
      id,
      kind: 'quote',
      purpose: 'burst',
      path: '/webhooks/quote-status',
      body: JSON.stringify(sampleEvent('quote', { id: 'order', now: at(dated) })),
    },
  });
  /** The partner's call of `webhookId`'s opportunity update, from `from` to `to` ms. */
  const opportunityCall = (webhookId: string, from: number, to: number): RecordedCall => ({
    ...call(`${webhookId}:update_sales_opportunity`),
    received_at: at(from),
    at: at(to),
  });
  const events = [quoteEvent(1, 'wh_older', 0), quoteEvent(2, 'wh_newer', 1000)];

  it('finds an entity in order when its calls came one at a time, the newest last', () => {
    const calls = [opportunityCall('wh_older', 0, 100), opportunityCall('wh_newer', 100, 200)];
    expect(orderFindings(events, calls, 2000)).toEqual({
      entities: 1,
      backwards: [],
      overlapping: [],
    });
  });

  it('finds a call of an older event after the newest, and calls that overlapped', () => {
    const backwards = [opportunityCall('wh_newer', 0, 100), opportunityCall('wh_older', 100, 200)];
    expect(orderFindings(events, backwards, 2000).backwards).toEqual([
      'quote.status_changed Q-order update_sales_opportunity',
    ]);
    const overlapping = [
      opportunityCall('wh_older', 0, 500),
      opportunityCall('wh_newer', 100, 200),
    ];
    expect(orderFindings(events, overlapping, 2000).overlapping).toHaveLength(1);
    // A call the worker gave up on (answered after its time-out) ended its turn.
    const timedOut = [
      opportunityCall('wh_older', 0, 3000),
      opportunityCall('wh_newer', 2100, 2200),
    ];
    expect(orderFindings(events, timedOut, 2000).overlapping).toEqual([]);
  });
});
