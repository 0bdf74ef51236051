// Every Redis key and channel the system names, in one place, as BullMQ's `QueueKeys` knows every
// key of a queue. Each builder takes the prefix its key lives under first:
//
// - a partition's prefix (`Partitions.prefix(i)`, a hash tag in a Redis Cluster): what is written
//   per webhook, per entity or per minute, so that one script's keys share the partition's slot;
// - the shared prefix (`Partitions.shared`, `QUEUE_PREFIX`): circuits, routing rules, per-action
//   limits, logins, the stored partition count and the rejected changes.
//
// A key's spelling is its data: a change to one orphans what a running Redis holds under the old
// spelling (redis-keys.test.ts pins every one). Lua scripts get their keys as KEYS from here.
// BullMQ's own keys come from BullMQ (a queue's `keys` / `toKey`, or `keys.queue` below), never
// spelled by hand.
import { QueueKeys } from 'bullmq';
import type { KeysMap } from 'bullmq';

/** The keys of one target's circuit (docs in circuits/circuit-keys.ts). */
export interface CircuitKeys {
  circuit: string;
  /** The jobs it holds, first in line first. */
  held: string;
  /** Calls in flight while the target is suspect. */
  inFlight: string;
  /** The set naming every target. */
  targets: string;
  /** One webhook's failures against this target (its actions' calls are about one event). */
  failing(webhookId: string): string;
  /** The jobs of poison inputs, by when they last failed. */
  poison: string;
  /** The jobs whose failures are counted since the last 2xx. */
  streak: string;
}

/** The queue the previous version took webhooks in on, whose deduplication keys are still read. */
const LEGACY_WEBHOOKS_QUEUE = 'webhooks';

/** Redis keys, by what they hold; the first argument is the prefix they live under. */
export const keys = {
  // Per partition (a partition's prefix).

  /** The outcome record of one webhook: a hash, fields per action (`<action>:state`, ...). */
  outcome: (prefix: string, webhookId: string) => `${prefix}:outcome:${webhookId}`,
  /** The record stream: every change the recorder copies to the record store (record-changes.ts). */
  records: (prefix: string) => `${prefix}:records`,
  /** The newest `timestamp` (epoch ms) taken in for one entity, for out-of-order protection. */
  latest: (prefix: string, eventType: string, entityId: string) =>
    `${prefix}:latest:${eventType}:${entityId}`,
  /**
   * An entity's turn for one state-changing action: the job whose call it is, with a lease
   * (apps/worker/src/entity-turns.ts).
   */
  turn: (prefix: string, eventType: string, entityId: string, action: string) =>
    `${prefix}:turn:${eventType}:${entityId}:${action}`,
  /** The jobs waiting for that turn, by event order. */
  turnWaiting: (prefix: string, eventType: string, entityId: string, action: string) =>
    `${prefix}:turn-waiting:${eventType}:${entityId}:${action}`,
  /** Set when a quarantined webhook is released or discarded: its quarantine ended. */
  quarantineEnded: (prefix: string, webhookId: string) => `${prefix}:quarantine-ended:${webhookId}`,
  /**
   * The events delivered in one hour of their `timestamp` (`YYYY-MM-DDTHH`, or `untimed`), each
   * with its first ack, for `DEDUP_WINDOW_SECONDS` (`kept-acks.ts`).
   */
  dedup: (prefix: string, bucket: string) => `${prefix}:dedup:${bucket}`,
  /**
   * The previous version's forms, read for one deduplication window after an upgrade
   * (`kept-acks.ts`): the first webhook id of an event (the SHA-256 of its canonical JSON, hex),
   * which was BullMQ's deduplication key on that version's `webhooks` queue, and the first acks
   * of the webhooks accepted on one UTC day.
   */
  legacyDedup: (prefix: string, digest: string) =>
    `${new QueueKeys(prefix).toKey(LEGACY_WEBHOOKS_QUEUE, 'de')}:${digest}`,
  legacyAcks: (prefix: string, day: string) => `${prefix}:acks:${day}`,
  /** The ingress's counts (accepted, duplicate, each refusal code) of one minute. */
  ingressCounts: (prefix: string, minute: string) => `${prefix}:ingress-counts:${minute}`,
  /** The minutes whose counts changed since the recorder last copied them. */
  ingressCountsChanged: (prefix: string) => `${prefix}:ingress-counts:changed`,
  /** The actions completed, failed for good and held in one minute (`ActionCount`). */
  actionCounts: (prefix: string, minute: string) => `${prefix}:action-counts:${minute}`,
  /** BullMQ's keys of the queue `name` under `prefix`, for code with no `Queue` at hand. */
  queue: (prefix: string, name: string): KeysMap => new QueueKeys(prefix).getKeys(name),

  // Shared (the shared prefix).

  /** Each sender's clock as the ingress processes estimate it, by sender (a hash of JSON). */
  senderClocks: (prefix: string) => `${prefix}:sender-clocks`,
  /** Where the partition count in use is stored. */
  partitionCount: (prefix: string) => `${prefix}:partitions`,
  /** The secret that keys the entity-to-partition map, kept beside the partition count. */
  partitionMapKey: (prefix: string) => `${prefix}:partitions:map-key`,
  /**
   * The changes the recorder could not write, kept for an operator
   * (packages/records/src/stream/rejected-changes.ts).
   */
  rejected: (prefix: string) => `${keys.records(prefix)}:rejected`,
  /** The routing rules in force (JSON), seeded on first read (rules-store.ts). */
  rules: (prefix: string) => `${prefix}:rules`,
  /** Per-action limits: start times of recent calls, and leases of calls in flight. */
  rateWindow: (prefix: string, action: string) => `${prefix}:limit:${action}:started`,
  inFlight: (prefix: string, action: string) => `${prefix}:limit:${action}:in-flight`,
  /** The dashboard's failed logins from one client address. */
  loginFailures: (prefix: string, address: string) =>
    `${prefix}:dashboard:login-failures:${address}`,
  /** The set naming every target with a circuit. */
  circuitTargets: (prefix: string) => `${prefix}:circuits`,
  /** The keys of one target's circuit (circuits/circuit-keys.ts), all under `{prefix}:circuit:{target}`. */
  circuit: (prefix: string, target: string): CircuitKeys => {
    const circuit = `${prefix}:circuit:${target}`;
    return {
      circuit,
      held: `${circuit}:held`,
      inFlight: `${circuit}:in-flight`,
      targets: keys.circuitTargets(prefix),
      failing: (webhookId) => `${circuit}:failing:${webhookId}`,
      poison: `${circuit}:poison`,
      streak: `${circuit}:streak`,
    };
  },
};

/**
 * The pub/sub channels, one per kind of change, each named `{prefix}:<what>-changed` and
 * carrying what a listener needs to tell whether the change concerns it.
 */
export const channels = {
  /**
   * The id of every webhook whose outcome record changed (`OutcomeStore.waitUntil` listens;
   * a partition's prefix).
   */
  outcomeChanged: (prefix: string) => `${prefix}:outcome-changed`,
  /** The time of every replacement of the routing rules (each ingress re-reads them; shared). */
  rulesChanged: (prefix: string) => `${prefix}:rules-changed`,
  /**
   * The target of every change to a circuit that opens, closes or overrides it, or makes it clean
   * or suspect (each worker's copy of the circuits listens; shared prefix).
   */
  circuitChanged: (prefix: string) => `${prefix}:circuit-changed`,
};
