// The soak's checks, made from the outside once the system has drained: the record store (read
// directly), the partner stand-in's calls, the dashboard's ledger and Redis's memory.
import pg from 'pg';
import type { RecordedCall } from '@pw/sandbox';
import { endsActionAtOnce } from './outage-calls.js';
import { orderFindings } from './order-check.js';
import type { OrderFindings } from './order-check.js';
import { API_TIMEOUT_MS } from './system.js';
import type { Delivery, Purpose } from './traffic.js';

/** Webhook states a soak ends in: nothing left to run. */
const FINAL = ['completed', 'failed', 'quarantined', 'discarded'];

interface StoredWebhook {
  webhook_id: string;
  state: string;
  stale: boolean;
  received_at: Date;
}
interface StoredAction {
  webhook_id: string;
  name: string;
  state: string;
  attempts: number;
  skipped: string | null;
  last_error: string | null;
  completed_at: Date | null;
}

export interface Store {
  webhooks: Map<string, StoredWebhook>;
  actions: StoredAction[];
}

/** The acknowledged webhooks' records and actions as the store has them. */
export async function readStore(storeUrl: string, ids: readonly string[]): Promise<Store> {
  const client = new pg.Client({ connectionString: storeUrl });
  await client.connect();
  try {
    const webhooks = await client.query<StoredWebhook>(
      'select webhook_id, state, stale, received_at from webhooks where webhook_id = any($1)',
      [ids],
    );
    const actions = await client.query<StoredAction>(
      `select webhook_id, name, state, attempts, skipped, last_error, completed_at from actions
        where webhook_id = any($1)`,
      [ids],
    );
    return {
      webhooks: new Map(webhooks.rows.map((row) => [row.webhook_id, row])),
      actions: actions.rows,
    };
  } finally {
    await client.end();
  }
}

/** How many of `ids` the store has in a final state. */
export function finalCount(store: Store, ids: readonly string[]): number {
  return ids.filter((id) => FINAL.includes(store.webhooks.get(id)?.state ?? '')).length;
}

export interface Findings {
  acknowledged: number;
  /** Acknowledged, but not in the store at all. */
  lost: string[];
  /** In the store, but not in a final state after the drain. */
  stuck: string[];
  /** How many of `stuck` each kind of event is (the poison's, the plain traffic's...). */
  stuck_by_purpose: Partial<Record<Purpose, number>>;
  /**
   * Ordinary actions that failed for good (dead letters), with their last error: no fault of the
   * soak is permanent for them. The poison's and the refused odd paths' are `expected_failures`.
   */
  failed: { webhook_id: string; action: string; error: string | null }[];
  /** Actions that fail for a permanent reason by design, not counted in `failed`. */
  expected_failures: {
    /** The poison events' actions: each must end a dead letter, its attempts spent. */
    poison: { actions: number; dead_letters: number; attempts_spent: number };
    /**
     * Odd-path events' actions the partner's front refused (a 4xx that ends an action at once),
     * and how many of them failed on their first attempt.
     */
    refused: { actions: number; first_attempt: number };
  };
  quarantined: number;
  /** Events a redelivery of which got another webhook id than its first acknowledgement. */
  redelivered_as_new: number[];
  redeliveries: number;
  effects: {
    expected: number;
    /** Distinct (webhook_id, action) effects the partner applied. */
    applied: number;
    /** Expected, never applied. */
    missing: string[];
    /** Applied though the record says it was skipped or failed, or for an unknown webhook. */
    unexpected: string[];
    /** One event's actions applied under two webhook ids. */
    duplicate: string[];
    /** Calls repeating an applied effect's `Idempotency-Key` (answers lost, retried). */
    repeated_calls: number;
  };
  /**
   * `older` events sent after their entity's newer one was acknowledged (it came first, so they
   * must be stale), and how many of them are. One whose newer event was refused and retried may
   * arrive first, and is then rightly not stale: those are not counted.
   */
  stale_older: number;
  older: number;
  /** Each entity's state-changing calls one at a time, the last its newest event's. */
  order: OrderFindings;
}

/** The calls the partner answered 2xx, by `Idempotency-Key`: how many each. */
function appliedEffects(calls: readonly RecordedCall[]): Map<string, number> {
  const applied = new Map<string, number>();
  for (const call of calls) {
    const key = call.headers['idempotency-key'];
    if (key && call.status >= 200 && call.status < 300) {
      applied.set(key, (applied.get(key) ?? 0) + 1);
    }
  }
  return applied;
}

/** The `Idempotency-Key`s of calls answered with a 4xx that ends an action at once. */
const refusedKeys = (calls: readonly RecordedCall[]) =>
  new Set(
    calls.flatMap((call) => {
      const key = call.headers['idempotency-key'];
      return key && endsActionAtOnce(call.status) ? [key] : [];
    }),
  );

/** Findings of `acknowledged` webhooks before any is looked at. */
const nothingFound = (acknowledged: number): Findings => ({
  acknowledged,
  lost: [],
  stuck: [],
  stuck_by_purpose: {},
  failed: [],
  expected_failures: {
    poison: { actions: 0, dead_letters: 0, attempts_spent: 0 },
    refused: { actions: 0, first_attempt: 0 },
  },
  quarantined: 0,
  redelivered_as_new: [],
  redeliveries: 0,
  effects: {
    expected: 0,
    applied: 0,
    missing: [],
    unexpected: [],
    duplicate: [],
    repeated_calls: 0,
  },
  stale_older: 0,
  older: 0,
  order: { entities: 0, backwards: [], overlapping: [] },
});

/**
 * What the drained system shows against what was acknowledged; `actionAttempts` is the apps'
 * `ACTION_ATTEMPTS`, which a dead letter has spent.
 */
export function findings(
  deliveries: readonly Delivery[],
  store: Store,
  calls: readonly RecordedCall[],
  actionAttempts: number,
): Findings {
  const acked = deliveries.filter((d) => d.ack);
  const applied = appliedEffects(calls);
  const refused = refusedKeys(calls);
  const actionsOf = new Map<string, StoredAction[]>();
  for (const action of store.actions) {
    actionsOf.set(action.webhook_id, [...(actionsOf.get(action.webhook_id) ?? []), action]);
  }
  const result = nothingFound(acked.length);
  const expected = new Set<string>();
  for (const delivery of acked) {
    const id = delivery.ack!.webhook_id;
    result.redeliveries += delivery.redeliveries.length;
    const others = delivery.redeliveries.filter((ack) => ack.webhook_id !== id);
    if (others.length > 0) {
      result.redelivered_as_new.push(delivery.event.id);
      for (const other of others) {
        if (other.actions.some((action) => applied.has(`${other.webhook_id}:${action}`))) {
          result.effects.duplicate.push(`${id} ${other.webhook_id}`);
        }
      }
    }
    const stored = store.webhooks.get(id);
    if (!stored) {
      result.lost.push(id);
      continue;
    }
    if (!FINAL.includes(stored.state)) {
      const { purpose } = delivery.event;
      result.stuck.push(id);
      result.stuck_by_purpose[purpose] = (result.stuck_by_purpose[purpose] ?? 0) + 1;
    }
    if (stored.state === 'quarantined') result.quarantined += 1;
    const newer = deliveries[delivery.event.id - 1];
    if (
      delivery.event.purpose === 'older' &&
      newer?.ack &&
      newer.ack.ackedAt < delivery.ack!.sentAt
    ) {
      result.older += 1;
      if (stored.stale) result.stale_older += 1;
    }
    for (const action of actionsOf.get(id) ?? []) {
      const key = `${id}:${action.name}`;
      const { poison } = result.expected_failures;
      if (delivery.event.purpose === 'poison') poison.actions += 1;
      if (action.state === 'failed') {
        failure(result, delivery, action, refused.has(key), actionAttempts);
      } else if (action.state === 'completed' && action.skipped === null) {
        expected.add(key);
        if (!applied.has(key)) result.effects.missing.push(key);
      }
    }
  }
  for (const [key, count] of applied) {
    result.effects.repeated_calls += count - 1;
    if (!expected.has(key)) result.effects.unexpected.push(key);
  }
  result.order = orderFindings(deliveries, calls, API_TIMEOUT_MS);
  result.effects.expected = expected.size;
  result.effects.applied = [...applied.keys()].filter((key) => expected.has(key)).length;
  return result;
}

/** Counts a failed action: an expected failure of a poison or odd-path event, else `failed`. */
function failure(
  result: Findings,
  delivery: Delivery,
  action: StoredAction,
  refused: boolean,
  actionAttempts: number,
): void {
  const { poison, refused: odd } = result.expected_failures;
  if (delivery.event.purpose === 'poison') {
    poison.dead_letters += 1;
    if (action.attempts >= actionAttempts) poison.attempts_spent += 1;
  } else if (delivery.event.purpose === 'odd-path' && refused) {
    odd.actions += 1;
    if (action.attempts === 1) odd.first_attempt += 1;
  } else {
    result.failed.push({
      webhook_id: action.webhook_id,
      action: action.name,
      error: action.last_error,
    });
  }
}

/** The `q`-th quantile (0-1) of `values`, rounded to 0.1; null for none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round(sorted[index]! * 10) / 10;
}

/** p50, p95, p99 and the largest of `values` (ms). */
export const percentiles = (values: readonly number[]) => ({
  p50: quantile(values, 0.5),
  p95: quantile(values, 0.95),
  p99: quantile(values, 0.99),
  max: quantile(values, 1),
});

/** Each completed action's time from its webhook's acknowledgement to its completion (ms). */
export function completionTimes(store: Store): number[] {
  const times: number[] = [];
  for (const action of store.actions) {
    const webhook = store.webhooks.get(action.webhook_id);
    if (!webhook || !action.completed_at || action.skipped !== null) continue;
    times.push(action.completed_at.getTime() - webhook.received_at.getTime());
  }
  return times;
}
