// Quarantine through the real surface: npm start's system keeps an authentic event that fails its
// schema; the running dashboard refuses to release it (its schema still refuses the event); the
// dashboard of a later build (a schema registry entry added: tests/e2e/fixtures) releases it, and
// the actions it sets off run once each. Discards, bulk releases and releases of webhooks Redis no
// longer holds go through the same API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { keys } from '@pw/shared/queue';
import { signEvent } from '@pw/shared/signing';
import type { Acknowledgement, Problem } from '@pw/shared/events';
import type { WebhookOutcome } from '@pw/shared/outcomes';
import { ChildRun, freePort, testRedisUrl } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

interface ErrorBody {
  error: { code: string; message: string; details: Problem[] };
}
interface AuditEntry {
  user: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
}
interface SandboxCall {
  path: string;
  headers: Record<string, string>;
}

let system: RunningSystem;
let upgraded: ChildRun;
let upgradedUrl = '';
let redis: Redis;

beforeAll(async () => {
  system = await startSystem({ ACTION_BACKOFF: 'fixed', ACTION_BACKOFF_DELAY_MS: '20' });
  // The later build's dashboard, beside the running one: the same Redis, queues and record store.
  const port = await freePort();
  upgradedUrl = `http://127.0.0.1:${port}`;
  upgraded = ChildRun.tsx('tests/e2e/fixtures/upgraded-dashboard.ts', {
    ...system.env,
    DASHBOARD_PORT: String(port),
  });
  await upgraded.printed('dashboard listening');
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
}, 120_000);
afterAll(async () => {
  redis?.disconnect();
  await upgraded?.stop('SIGKILL');
  await system?.stop();
});

/** The running build's dashboard (`system`), or the later build's (`upgraded`). */
function call(build: 'running' | 'upgraded', path: string, init: RequestInit = {}) {
  const json: Record<string, string> = init.body ? { 'content-type': 'application/json' } : {};
  if (build === 'running') return system.dashboard(path, { ...init, headers: json });
  const { DASHBOARD_USER: user, DASHBOARD_PASSWORD: password } = system.env;
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return fetch(`${upgradedUrl}${path}`, { ...init, headers: { authorization, ...json } });
}

const postTo = (build: 'running' | 'upgraded', path: string, body?: unknown) =>
  call(build, path, {
    method: 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function deliver(kind: 'quote' | 'contract', event: Record<string, unknown>) {
  const path = kind === 'quote' ? 'quote-status' : 'contract-status';
  const response = await fetch(`${system.url.ingress}/webhooks/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signEvent(event, DEV_WEBHOOK_SECRET)),
  });
  return { status: response.status, ack: acknowledgementSchema.parse(await response.json()) };
}

/** An approved quote whose product's price is `true`: the running build's schema refuses it. */
function driftedQuote(id: string, timestamp?: string): Record<string, unknown> {
  const event = sampleEvent('quote', { id, status: 'approved' });
  return {
    ...event,
    product: { ...(event.product as object), price_with_taxes: true },
    ...(timestamp ? { timestamp } : {}),
  };
}

/** `event` with a U+0000 in its product's name. */
function withNul(event: Record<string, unknown>): Record<string, unknown> {
  return {
    ...event,
    product: { ...(event.product as object), product_name: 'Home\u0000insurance' },
  };
}

/** Delivers `event`, checks it was kept (202, quarantined) and waits for the store to list it. */
async function keep(kind: 'quote' | 'contract', event: Record<string, unknown>) {
  const { status, ack } = await deliver(kind, event);
  expect(status).toBe(202);
  expect(ack).toMatchObject({ quarantined: true, actions_triggered: [] });
  await system.poll<{ webhooks: unknown[] }>(
    `/api/webhooks?state=quarantined&q=${ack.webhook_id}`,
    (body) => body.webhooks.length === 1,
  );
  return ack;
}

const finished = (outcome: WebhookOutcome) =>
  outcome.actions.length > 0 &&
  outcome.actions.every((action) => action.state === 'completed' || action.state === 'failed');

async function partnerCalls(webhookId: string): Promise<SandboxCall[]> {
  const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as SandboxCall[];
  return calls.filter((c) => c.headers['idempotency-key']?.startsWith(`${webhookId}:`));
}

async function auditOf(webhookId: string, action: string): Promise<AuditEntry> {
  const { entries } = await system.poll<{ entries: AuditEntry[] }>('/api/audit', (body) =>
    body.entries.some((entry) => entry.target === webhookId && entry.action === action),
  );
  return entries.find((entry) => entry.target === webhookId && entry.action === action)!;
}

describe('release after a fix', { timeout: 90_000 }, () => {
  let ack: Acknowledgement;
  let event: Record<string, unknown>;

  it('the running build refuses to release a kept quote: 409 still_invalid with its problems now, nothing run', async () => {
    event = driftedQuote(`drift-${Date.now()}`);
    ack = await keep('quote', event);
    const refused = await postTo('running', `/api/quarantine/${ack.webhook_id}/release`);
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as ErrorBody;
    expect(body.error.code).toBe('still_invalid');
    expect(body.error.details.map((problem) => problem.path)).toEqual(['product.price_with_taxes']);
    const dry = await postTo('running', '/api/quarantine/release?dry_run=true');
    const preview = (await dry.json()) as {
      quarantined: { webhook_id: string; releasable: boolean }[];
    };
    expect(preview.quarantined.find((kept) => kept.webhook_id === ack.webhook_id)).toMatchObject({
      releasable: false,
    });
    expect(await partnerCalls(ack.webhook_id)).toEqual([]);
    const record = (await (await system.dashboard(`/api/webhooks/${ack.webhook_id}`)).json()) as {
      state: string;
    };
    expect(record.state).toBe('quarantined');
  });

  it('the later build releases it: 202 with its actions, each called once; a repeat is answered as an ordinary webhook; a second release is refused', async () => {
    const released = await postTo('upgraded', `/api/quarantine/${ack.webhook_id}/release`);
    expect(released.status).toBe(202);
    const body = (await released.json()) as { webhook_id: string; actions_triggered: string[] };
    expect(body.webhook_id).toBe(ack.webhook_id);
    expect(body.actions_triggered).toContain('lock_price');

    const outcome = await system.outcome(ack.webhook_id, finished);
    expect(outcome.actions.map((action) => [action.name, action.state])).toEqual(
      body.actions_triggered.map((name) => [name, 'completed']),
    );
    const keys = (await partnerCalls(ack.webhook_id)).map((c) => c.headers['idempotency-key']);
    expect(keys.sort()).toEqual(body.actions_triggered.map((a) => `${ack.webhook_id}:${a}`).sort());

    // The partner delivers the same event again: the same webhook, now an ordinary one.
    const repeat = await deliver('quote', event);
    expect(repeat.status).toBe(200);
    expect(repeat.ack).toMatchObject({
      webhook_id: ack.webhook_id,
      actions_triggered: body.actions_triggered,
    });
    expect(repeat.ack.quarantined).toBeUndefined();

    const again = await postTo('upgraded', `/api/quarantine/${ack.webhook_id}/release`);
    expect(again.status).toBe(409);
    expect(((await again.json()) as ErrorBody).error.code).toBe('not_quarantined');
    expect(await auditOf(ack.webhook_id, 'quarantine_release')).toMatchObject({
      user: 'operator',
      details: { actions_triggered: body.actions_triggered },
    });
    // The store's record: completed, with the problems it was kept for.
    const stored = await system.poll<{ state: string; problems: { path: string }[] | null }>(
      `/api/webhooks/${ack.webhook_id}`,
      (record) => record.state === 'completed',
    );
    expect(stored.problems?.map((problem) => problem.path)).toEqual(['product.price_with_taxes']);
    expect(await partnerCalls(ack.webhook_id)).toHaveLength(body.actions_triggered.length);
  });
});

describe('the out-of-order guard', { timeout: 90_000 }, () => {
  it('a released event older than one its entity has had since is stale: its state-changing actions make no call', async () => {
    const id = `order-${Date.now()}`;
    const older = new Date(Date.now() - 60_000).toISOString();
    const kept = await keep('quote', driftedQuote(id, older));
    // A newer event of the same quote, valid, runs first.
    const newer = await deliver('quote', {
      ...sampleEvent('quote', { id, status: 'approved' }),
      timestamp: new Date().toISOString(),
    });
    expect(newer.status).toBe(200);
    await system.outcome(newer.ack.webhook_id, finished);

    const released = await postTo('upgraded', `/api/quarantine/${kept.webhook_id}/release`);
    expect(released.status).toBe(202);
    const outcome = await system.outcome(kept.webhook_id, finished);
    expect(outcome.stale).toBe(true);
    const skipped = outcome.actions.filter((action) => action.skipped === 'stale');
    expect(skipped.map((action) => action.name)).toContain('lock_price');
    const called = (await partnerCalls(kept.webhook_id)).map((c) => c.headers['idempotency-key']);
    for (const action of skipped) expect(called).not.toContain(`${kept.webhook_id}:${action.name}`);
  });
});

describe('discard', { timeout: 90_000 }, () => {
  it('a repeat after the discard is answered with what is true now: 200, discarded, not quarantined', async () => {
    const event = driftedQuote(`repeat-discard-${Date.now()}`);
    const ack = await keep('quote', event);
    // Before: the repeat is told it is quarantined, as the first delivery was.
    expect(await deliver('quote', event)).toMatchObject({
      status: 202,
      ack: { webhook_id: ack.webhook_id, quarantined: true },
    });
    const discarded = await postTo('running', `/api/quarantine/${ack.webhook_id}/discard`, {
      reason: 'a test of repeats',
    });
    expect(discarded.status).toBe(200);
    expect(await deliver('quote', event)).toEqual({
      status: 200,
      ack: {
        received: true,
        processed_at: ack.processed_at,
        webhook_id: ack.webhook_id,
        actions_triggered: [],
        discarded: true,
      },
    });
  });

  it('needs a reason; ends the webhook without running it; is audited with the reason; the ledger counts it and balances', async () => {
    const from = new Date(Date.now() - 60_000).toISOString();
    const ack = await keep('quote', driftedQuote(`discard-${Date.now()}`));
    const path = `/api/quarantine/${ack.webhook_id}/discard`;
    for (const body of [undefined, {}, { reason: '   ' }]) {
      const refused = await postTo('running', path, body);
      expect(refused.status).toBe(400);
      const error = ((await refused.json()) as ErrorBody).error;
      expect(error.code).toBe('invalid_request');
      expect(error.details.map((detail) => detail.path)).toEqual(['reason']);
    }
    const reason = 'test order from the partner sandbox; not a real quote';
    const discarded = await postTo('running', path, { reason });
    expect(discarded.status).toBe(200);
    expect(await discarded.json()).toEqual({ webhook_id: ack.webhook_id, state: 'discarded' });
    expect((await postTo('running', path, { reason })).status).toBe(409);
    const release = await postTo('upgraded', `/api/quarantine/${ack.webhook_id}/release`);
    expect(release.status).toBe(409);

    await system.poll<{ state: string }>(
      `/api/webhooks/${ack.webhook_id}`,
      (record) => record.state === 'discarded',
    );
    expect(await auditOf(ack.webhook_id, 'quarantine_discard')).toMatchObject({
      user: 'operator',
      details: { reason },
    });
    expect(await partnerCalls(ack.webhook_id)).toEqual([]);
    const to = new Date(Date.now() + 60_000).toISOString();
    const ledger = await system.poll<{ discarded: number; in_flight: number; balanced: boolean }>(
      `/api/ledger?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
      (body) => body.in_flight === 0 && body.discarded >= 1,
    );
    expect(ledger.balanced).toBe(true);
  });
});

describe('a release from the store', { timeout: 90_000 }, () => {
  it('a kept event whose Redis record has expired is released from the record store’s copy', async () => {
    const ack = await keep('quote', driftedQuote(`expired-${Date.now()}`));
    // As if its record had outlived its time in Redis: the store still keeps it.
    expect(await redis.del(keys.outcome(system.env.QUEUE_PREFIX!, ack.webhook_id))).toBe(1);
    const released = await postTo('upgraded', `/api/quarantine/${ack.webhook_id}/release`);
    expect(released.status).toBe(202);
    const outcome = await system.outcome(ack.webhook_id, finished);
    expect(outcome.state).toBe('completed');
  });
});

describe('bulk release', { timeout: 90_000 }, () => {
  it('a dry run counts what the later build would release; the release then releases those, and no other', async () => {
    const from = new Date().toISOString();
    const quotes = [
      await keep('quote', driftedQuote(`bulk-a-${Date.now()}`)),
      await keep('quote', driftedQuote(`bulk-b-${Date.now()}`)),
    ];
    // Still refused by the later build too: a contract whose customer id is not an identifier.
    const contract = await keep('contract', {
      ...sampleEvent('contract', { status: 'active' }),
      customer_id: true,
    });
    // Kept for its U+0000, which the store keeps as U+FFFD: its copy passes the schema, but it is
    // not the event received, and a release refuses it. The dry run counts it as a release would.
    const nul = await keep(
      'quote',
      withNul(sampleEvent('quote', { id: `bulk-nul-${Date.now()}` })),
    );
    const window = `from=${encodeURIComponent(from)}`;
    const dry = await postTo('upgraded', `/api/quarantine/release?${window}&dry_run=true`);
    expect(dry.status).toBe(200);
    const preview = (await dry.json()) as {
      would_release: number;
      still_invalid: number;
      quarantined: { webhook_id: string; releasable: boolean }[];
    };
    expect(preview).toMatchObject({ would_release: 2, still_invalid: 2 });
    expect(preview.quarantined.map((kept) => [kept.webhook_id, kept.releasable]).sort()).toEqual(
      [
        [contract.webhook_id, false],
        [nul.webhook_id, false],
        ...quotes.map((quote) => [quote.webhook_id, true]),
      ].sort(),
    );
    for (const quote of quotes) {
      expect((await system.outcome(quote.webhook_id, () => true)).state).toBe('quarantined');
    }

    const bulk = await postTo('upgraded', `/api/quarantine/release?${window}`);
    expect(bulk.status).toBe(202);
    expect(await bulk.json()).toMatchObject({ released: 2, still_invalid: 2, not_quarantined: 0 });
    for (const quote of quotes) {
      expect((await system.outcome(quote.webhook_id, finished)).state).toBe('completed');
      await auditOf(quote.webhook_id, 'quarantine_release');
    }
    expect((await system.outcome(contract.webhook_id, () => true)).state).toBe('quarantined');
    expect((await system.outcome(nul.webhook_id, () => true)).state).toBe('quarantined');
  });
});

describe('the list', { timeout: 90_000 }, () => {
  it('sums each kept event up (its size, its problems), so a page weighs the same whatever the events weigh; the event is read one at a time', async () => {
    const from = new Date().toISOString();
    const notes = 'n'.repeat(60_000);
    const kept: Acknowledgement[] = [];
    for (let i = 0; i < 8; i++) {
      kept.push(await keep('quote', { ...driftedQuote(`heavy-${i}-${Date.now()}`), notes }));
    }
    const response = await call('running', `/api/quarantine?from=${encodeURIComponent(from)}`);
    expect(response.status).toBe(200);
    const text = await response.text();
    // Eight events of 60 KB: the page holds their summaries, a few hundred bytes each.
    expect(text.length).toBeLessThan(8 * 1000);
    const page = JSON.parse(text) as { quarantined: Record<string, unknown>[] };
    expect(page.quarantined.map((item) => item.webhook_id).sort()).toEqual(
      kept.map((ack) => ack.webhook_id).sort(),
    );
    for (const item of page.quarantined) {
      expect(item).not.toHaveProperty('event');
      expect(item.size).toBeGreaterThan(60_000);
      expect(item.size).toBeLessThan(62_000);
      expect(item.problem_count).toBe((item.problems as Problem[]).length);
    }

    const one = await call('running', `/api/quarantine/${kept[0]!.webhook_id}`);
    expect(one.status).toBe(200);
    const body = (await one.json()) as { event: Record<string, unknown>; problems: Problem[] };
    expect(body).toMatchObject({
      webhook_id: kept[0]!.webhook_id,
      event_type: 'quote.status_changed',
      size: page.quarantined.find((item) => item.webhook_id === kept[0]!.webhook_id)!.size,
    });
    expect(body.event.notes).toBe(notes);
    expect(body.problems.length).toBeGreaterThan(0);
    expect((await call('running', '/api/quarantine/wh_unknown00000000000000')).status).toBe(404);
  });
});
