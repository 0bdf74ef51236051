// The record store through the real surface: npm start's apps write every webhook's history to
// PostgreSQL (a schema of this test's own), and the dashboard's operator API reads it back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { Acknowledgement } from '@pw/shared/events';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

interface Attempt {
  attempt: number;
  outcome: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}
interface Outcome {
  webhook_id: string;
  customer_id: string | null;
  state: string;
  actions: { name: string; state: string; history: Attempt[] }[];
}
interface Ledger {
  accepted: number;
  duplicates: number;
  completed: number;
  failed: number;
  in_flight: number;
  balanced: boolean;
  refusals: Record<string, number>;
}

let system: RunningSystem;
beforeAll(async () => {
  system = await startSystem({
    ACTION_BACKOFF: 'fixed',
    ACTION_BACKOFF_DELAY_MS: '20',
    CIRCUIT_FAILURE_THRESHOLD: '1000',
  });
}, 120_000);
afterAll(async () => {
  await system.stop();
});

const fail = (spec: { status: number; pathPattern: string; times?: number; forSeconds?: number }) =>
  fetch(`${system.url.api}/__sandbox/failures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });

async function post(event: Record<string, unknown>): Promise<Response> {
  return fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signEvent(event, DEV_WEBHOOK_SECRET)),
  });
}

type TrendCount = 'accepted' | 'completed' | 'failed' | 'held';

/** The console's trends (`GET /api/trends`) summed over their hour. */
async function trendTotals(): Promise<Record<TrendCount, number>> {
  const { minutes } = (await (await system.dashboard('/api/trends')).json()) as {
    minutes: Record<TrendCount, number>[];
  };
  const sum = (name: TrendCount) => minutes.reduce((total, minute) => total + minute[name], 0);
  return {
    accepted: sum('accepted'),
    completed: sum('completed'),
    failed: sum('failed'),
    held: sum('held'),
  };
}

/** Posts `events` 25 at a time; their acknowledgements, in order. */
async function postAll(events: Record<string, unknown>[]): Promise<Acknowledgement[]> {
  const acks: Acknowledgement[] = [];
  for (let next = 0; next < events.length; next += 25) {
    const answers = await Promise.all(events.slice(next, next + 25).map((event) => post(event)));
    for (const answer of answers) {
      const body: unknown = await answer.json();
      // Every one acknowledged: a refusal names its status and its answer.
      expect(answer.status, JSON.stringify(body)).toBe(200);
      acks.push(acknowledgementSchema.parse(body));
    }
  }
  return acks;
}

/** The console's trends grew by `expected` since `before`. */
async function expectTrendsGrewBy(
  before: Record<TrendCount, number>,
  expected: Record<TrendCount, number>,
): Promise<void> {
  const trends = await trendTotals();
  expect({
    accepted: trends.accepted - before.accepted,
    completed: trends.completed - before.completed,
    failed: trends.failed - before.failed,
    held: trends.held - before.held,
  }).toEqual(expected);
}

/** Replays one failed webhook through the operator API; the audit log names the operator. */
async function replayOneFailedAudited(): Promise<void> {
  const failed = await system.poll<{ webhooks: { webhook_id: string }[] }>(
    `/api/webhooks?state=failed&limit=1`,
    (body) => body.webhooks.length === 1,
  );
  const webhookId = failed.webhooks[0]?.webhook_id ?? '';
  const replay = await system.dashboard(`/api/webhooks/${webhookId}/replay`, { method: 'POST' });
  expect(replay.status).toBe(202);
  const audit = await system.poll<{
    entries: { user: string; action: string; target: string }[];
  }>('/api/audit?limit=5', (body) => body.entries.some((entry) => entry.target === webhookId));
  expect(audit.entries[0]).toMatchObject({
    user: 'operator',
    action: 'replay',
    target: webhookId,
  });
}

describe('history', () => {
  it('an action answered 503, 503, then 200 shows three attempts with their statuses', async () => {
    expect((await fail({ status: 503, pathPattern: '/notifications', times: 2 })).status).toBe(201);
    const { code, lines } = await system.send('quote', '--status', 'approved', '--wait');
    expect(code).toBe(0);
    const ack = acknowledgementSchema.parse(lines[0]);
    const outcome = await system.poll<Outcome>(
      `/api/webhooks/${ack.webhook_id}`,
      (body) => body.actions.find((a) => a.name === 'notify_customer')?.history.length === 3,
    );
    const notify = outcome.actions.find((action) => action.name === 'notify_customer');
    expect(
      notify?.history.map(({ attempt, outcome, status }) => [attempt, outcome, status]),
    ).toEqual([
      [1, 'retrying', 503],
      [2, 'retrying', 503],
      [3, 'completed', 200],
    ]);
    expect(notify?.history[0]?.error).toMatch(/503/);
    // Found by its customer, newest first.
    const found = await system.poll<{ webhooks: { webhook_id: string }[] }>(
      `/api/webhooks?customer_id=${encodeURIComponent(outcome.customer_id ?? '')}`,
      (body) => body.webhooks.length > 0,
    );
    expect(found.webhooks[0]?.webhook_id).toBe(ack.webhook_id);
  });
});

describe('quarantine', () => {
  it('`npm run send -- contract --invalid timestamp` is kept, answered 202, found by search with its problems, and runs nothing', async () => {
    const { code, lines, output } = await system.send('contract', '--invalid', 'timestamp');
    expect(code, output).toBe(0);
    const ack = acknowledgementSchema.parse(lines[0]);
    expect(ack).toMatchObject({ quarantined: true, actions_triggered: [] });
    expect(ack.problems?.map((problem) => problem.path)).toEqual(['timestamp']);
    const found = await system.poll<{ webhooks: { webhook_id: string; state: string }[] }>(
      '/api/webhooks?state=quarantined',
      (body) => body.webhooks.some((webhook) => webhook.webhook_id === ack.webhook_id),
    );
    expect(found.webhooks.find((w) => w.webhook_id === ack.webhook_id)?.state).toBe('quarantined');
    const record = (await (await system.dashboard(`/api/webhooks/${ack.webhook_id}`)).json()) as {
      state: string;
      actions: unknown[];
      event: Record<string, unknown> | null;
      problems: { path: string }[] | null;
    };
    expect(record).toMatchObject({ state: 'quarantined', actions: [] });
    const listed = (await (
      await system.dashboard('/api/quarantine?event_type=contract.status_changed')
    ).json()) as {
      quarantined: { webhook_id: string; problems: { path: string }[] }[];
    };
    expect(listed.quarantined.find((kept) => kept.webhook_id === ack.webhook_id)).toMatchObject({
      problems: [{ path: 'timestamp' }],
    });
    const kept = (await (await system.dashboard(`/api/quarantine/${ack.webhook_id}`)).json()) as {
      event: { timestamp?: unknown };
    };
    expect(kept.event.timestamp).toBe(true);
    expect(record.event?.timestamp).toBe(true);
    expect(record.problems?.map((problem) => problem.path)).toEqual(['timestamp']);
  });
});

describe('the ledger', { timeout: 180_000 }, () => {
  it('balances after 1,000 events with dead letters; a repeat is a duplicate; replays are audited', async () => {
    // The ledger counts whole minutes: what an earlier test left in them is the baseline.
    const from = new Date().toISOString();
    const to = new Date(Date.now() + 5 * 60_000).toISOString();
    const query = `/api/ledger?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    // Balanced: what came before (the counts and the records) is all in the store.
    const base = await system.poll<Ledger>(query, (body) => body.in_flight === 0 && body.balanced);
    const grown = (body: Ledger) => ({
      accepted: body.accepted - base.accepted,
      duplicates: body.duplicates - base.duplicates,
      completed: body.completed - base.completed,
      failed: body.failed - base.failed,
      in_flight: body.in_flight,
      balanced: body.balanced,
    });
    const trendsBefore = await trendTotals();
    // Every price lock of the first 100 calls is refused for good: 100 dead letters.
    expect((await fail({ status: 400, pathPattern: '/price-lock', times: 100 })).status).toBe(201);
    const events = Array.from({ length: 1000 }, (_, index) =>
      sampleEvent('quote', { id: `ledger-${index}`, status: 'approved' }),
    );
    const acks = await postAll(events);
    expect(acks.every((ack) => ack.actions_triggered.includes('lock_price'))).toBe(true);
    // One event delivered again: answered with the first ack, counted as a duplicate.
    const repeat = await post(events[0] ?? {});
    expect(((await repeat.json()) as Acknowledgement).webhook_id).toBe(acks[0]?.webhook_id);

    const ledger = await system.poll<Ledger>(
      query,
      (body) =>
        body.in_flight === 0 && grown(body).accepted === 1000 && grown(body).duplicates === 1,
    );
    expect(grown(ledger)).toEqual({
      accepted: 1000,
      duplicates: 1,
      completed: 900,
      failed: 100,
      in_flight: 0,
      balanced: true,
    });

    // The console's trends count the same: 1,000 accepted, 3 actions each, 100 failed for good.
    await expectTrendsGrewBy(trendsBefore, {
      accepted: 1000,
      completed: 2900,
      failed: 100,
      held: 0,
    });

    // The dead letters: a dry run counts them and replays nothing.
    const dry = await system.dashboard('/api/dead-letters/replay?dry_run=true&action=lock_price', {
      method: 'POST',
    });
    expect(await dry.json()).toMatchObject({ would_replay: 100 });
    // One replayed by hand (the partner answers again): audited with the operator's name.
    await replayOneFailedAudited();
    // The replayed webhook is in flight for a moment (failed 99, in_flight 1): wait until it is done.
    const after = await system.poll<Ledger>(
      query,
      (body) => grown(body).failed === 99 && body.in_flight === 0,
    );
    expect(grown(after)).toMatchObject({
      completed: 901,
      failed: 99,
      in_flight: 0,
      balanced: true,
    });
  });
});

describe('while webhooks are in flight', () => {
  let slow: RunningSystem;
  beforeAll(async () => {
    // Retries a minute apart: a failed call leaves its webhook in flight for the whole test.
    slow = await startSystem({ ACTION_BACKOFF: 'fixed', ACTION_BACKOFF_DELAY_MS: '60000' });
  }, 120_000);
  afterAll(async () => {
    await slow.stop();
  });

  it('in_flight says how many, and they stay accounted for', async () => {
    const from = new Date().toISOString();
    await fetch(`${slow.url.api}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 503, pathPattern: '.*', forSeconds: 60 }),
    });
    for (let index = 0; index < 5; index += 1) {
      const response = await fetch(`${slow.url.ingress}/webhooks/quote-status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          signEvent(sampleEvent('quote', { id: `flight-${index}` }), DEV_WEBHOOK_SECRET),
        ),
      });
      expect(response.status).toBe(200);
    }
    const to = new Date(Date.now() + 60_000).toISOString();
    const query = `/api/ledger?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    // The recorder copies the ingress's counts and the records each in its own batches, so the
    // two sides may differ for a moment; they must meet.
    const ledger = await slow.poll<Ledger>(
      query,
      (body) => body.in_flight === 5 && body.accepted === 5,
    );
    expect(ledger).toMatchObject({ accepted: 5, completed: 0, failed: 0, balanced: true });
  });
});
