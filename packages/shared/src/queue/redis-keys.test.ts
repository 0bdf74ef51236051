import calculateSlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { circuitKeys, circuitTargetsKey } from '../circuits/circuit-keys.js';
import { outcomeKey } from '../outcomes/outcome-keys.js';
import { recordStreamKey } from '../records/record-changes.js';
import { partitionCountKey } from './partition-count.js';
import { Partitions } from './partitions.js';
import { QUEUE_NAMES, channels as queuesChannels, keys as queuesKeys } from './queues.js';
import { channels, keys } from './redis-keys.js';

/** Every key a circuit has, flattened (one webhook's failures for a sample webhook). */
const circuitKeyList = (prefix: string, target: string): string[] => {
  const circuit = keys.circuit(prefix, target);
  return [
    circuit.circuit,
    circuit.held,
    circuit.inFlight,
    circuit.targets,
    circuit.failing('wh_1'),
    circuit.poison,
    circuit.streak,
  ];
};

/**
 * Every key of the map under `prefix`, by builder name, with sample arguments: the exact strings a
 * running Redis holds its data under. A change here orphans that data: it must be deliberate.
 */
const spelled = (prefix: string): Record<keyof typeof keys, string | string[]> => ({
  outcome: keys.outcome(prefix, 'wh_1'),
  records: keys.records(prefix),
  latest: keys.latest(prefix, 'quote.created', 'Q-1'),
  turn: keys.turn(prefix, 'quote.status_changed', 'Q-1', 'lock_price'),
  turnWaiting: keys.turnWaiting(prefix, 'quote.status_changed', 'Q-1', 'lock_price'),
  quarantineEnded: keys.quarantineEnded(prefix, 'wh_1'),
  dedup: keys.dedup(prefix, '2024-05-01T10'),
  legacyDedup: keys.legacyDedup(prefix, 'ab12'),
  legacyAcks: keys.legacyAcks(prefix, '2024-05-01'),
  ingressCounts: keys.ingressCounts(prefix, '2024-05-01T10:15'),
  ingressCountsChanged: keys.ingressCountsChanged(prefix),
  actionCounts: keys.actionCounts(prefix, '2024-05-01T10:15'),
  queue: Object.values(keys.queue(prefix, QUEUE_NAMES.actions)),
  senderClocks: keys.senderClocks(prefix),
  partitionCount: keys.partitionCount(prefix),
  partitionMapKey: keys.partitionMapKey(prefix),
  rejected: keys.rejected(prefix),
  rules: keys.rules(prefix),
  rateWindow: keys.rateWindow(prefix, 'lock_price'),
  inFlight: keys.inFlight(prefix, 'lock_price'),
  loginFailures: keys.loginFailures(prefix, '10.0.0.1'),
  circuitTargets: keys.circuitTargets(prefix),
  circuit: circuitKeyList(prefix, 'pricing'),
});

/** The keys written under a partition's prefix (the rest are under the shared prefix). */
const PARTITION_KEYS = [
  'outcome',
  'records',
  'latest',
  'turn',
  'turnWaiting',
  'quarantineEnded',
  'dedup',
  'legacyDedup',
  'legacyAcks',
  'ingressCounts',
  'ingressCountsChanged',
  'actionCounts',
  'queue',
] as const satisfies readonly (keyof typeof keys)[];

/** `spelled('pw')` as production stores it today. */
const STORED = {
  outcome: 'pw:outcome:wh_1',
  records: 'pw:records',
  latest: 'pw:latest:quote.created:Q-1',
  turn: 'pw:turn:quote.status_changed:Q-1:lock_price',
  turnWaiting: 'pw:turn-waiting:quote.status_changed:Q-1:lock_price',
  quarantineEnded: 'pw:quarantine-ended:wh_1',
  dedup: 'pw:dedup:2024-05-01T10',
  legacyDedup: 'pw:webhooks:de:ab12',
  legacyAcks: 'pw:acks:2024-05-01',
  ingressCounts: 'pw:ingress-counts:2024-05-01T10:15',
  ingressCountsChanged: 'pw:ingress-counts:changed',
  actionCounts: 'pw:action-counts:2024-05-01T10:15',
  queue: expect.arrayContaining([
    'pw:actions:wait',
    'pw:actions:paused',
    'pw:actions:active',
    'pw:actions:delayed',
    'pw:actions:prioritized',
    'pw:actions:failed',
    'pw:actions:de',
  ]) as unknown,
  senderClocks: 'pw:sender-clocks',
  partitionCount: 'pw:partitions',
  partitionMapKey: 'pw:partitions:map-key',
  rejected: 'pw:records:rejected',
  rules: 'pw:rules',
  rateWindow: 'pw:limit:lock_price:started',
  inFlight: 'pw:limit:lock_price:in-flight',
  loginFailures: 'pw:dashboard:login-failures:10.0.0.1',
  circuitTargets: 'pw:circuits',
  circuit: [
    'pw:circuit:pricing',
    'pw:circuit:pricing:held',
    'pw:circuit:pricing:in-flight',
    'pw:circuits',
    'pw:circuit:pricing:failing:wh_1',
    'pw:circuit:pricing:poison',
    'pw:circuit:pricing:streak',
  ],
};

describe('the Redis key map', () => {
  it('spells every key as production has stored it', () => {
    expect(spelled('pw')).toEqual(STORED);
  });

  it('has a spelling pinned above for every builder', () => {
    expect(Object.keys(spelled('pw')).sort()).toEqual(Object.keys(keys).sort());
  });

  it('names every channel as production has published it', () => {
    expect(channels.outcomeChanged('pw')).toBe('pw:outcome-changed');
    expect(channels.rulesChanged('pw')).toBe('pw:rules-changed');
    expect(channels.circuitChanged('pw')).toBe('pw:circuit-changed');
  });

  it('is what the older builders and queues.ts give', () => {
    expect(queuesKeys).toBe(keys);
    expect(queuesChannels).toBe(channels);
    expect(outcomeKey('pw', 'wh_1')).toBe(keys.outcome('pw', 'wh_1'));
    expect(recordStreamKey('pw')).toBe(keys.records('pw'));
    expect(partitionCountKey('pw')).toBe(keys.partitionCount('pw'));
    expect(circuitTargetsKey('pw')).toBe(keys.circuitTargets('pw'));
    expect(circuitKeys('pw', 'pricing')).toEqual({
      ...keys.circuit('pw', 'pricing'),
      failing: expect.any(Function) as unknown,
    });
    expect(circuitKeys('pw', 'pricing').failing('wh_1')).toBe(
      keys.circuit('pw', 'pricing').failing('wh_1'),
    );
  });

  it("puts every key of a partition under its prefix, in its hash tag's slot", () => {
    const partitions = new Partitions('{pw}', 8);
    for (const prefix of partitions.prefixes) {
      const slot = calculateSlot(prefix);
      const all = spelled(prefix);
      for (const name of PARTITION_KEYS) {
        for (const key of [all[name]].flat()) {
          expect(key.startsWith(`${prefix}:`), `${name}: ${key}`).toBe(true);
          expect(calculateSlot(key), `${name}: ${key}`).toBe(slot);
        }
      }
      expect(calculateSlot(channels.outcomeChanged(prefix))).toBe(slot);
    }
  });

  it('puts every shared key under the shared prefix, in one slot', () => {
    const shared = '{pw}';
    const slot = calculateSlot(shared);
    const all = spelled(shared);
    const sharedNames = (Object.keys(all) as (keyof typeof keys)[]).filter(
      (name) => !(PARTITION_KEYS as readonly string[]).includes(name),
    );
    expect(sharedNames.length).toBeGreaterThan(0);
    for (const name of sharedNames) {
      for (const key of [all[name]].flat()) {
        expect(key.startsWith(`${shared}:`), `${name}: ${key}`).toBe(true);
        expect(calculateSlot(key), `${name}: ${key}`).toBe(slot);
      }
    }
  });
});
