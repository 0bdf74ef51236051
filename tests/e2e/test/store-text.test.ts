// Every text that reaches the record store from outside is text it can keep
// (docs/records.md#text-the-store-keeps): a partner's error body cut inside a character, NUL, lone
// surrogates, invisible and fill characters, in partner error bodies, operators' reasons and the
// routing rules' texts. None costs a webhook its record or an operator's change its audit entry,
// and none is set aside.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { headOf } from '@pw/shared/outcomes';
import { DEFAULT_RULES } from '@pw/shared/rules';
import { signEvent } from '@pw/shared/signing';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

interface Stored {
  webhook_id: string;
  state: string;
  actions: { name: string; state: string; last_error: string | null }[];
}
interface AuditEntry {
  action: string;
  target: string;
  details: Record<string, unknown>;
}

let system: RunningSystem;
beforeAll(async () => {
  system = await startSystem({ ACTION_BACKOFF: 'fixed', ACTION_BACKOFF_DELAY_MS: '20' });
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

/** What the store keeps of `text`: NUL and lone surrogates as U+FFFD. */
const kept = (text: string) =>
  (text as unknown as { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\ufffd');

/** The sandbox partner answers 422 with `body` to every call carrying `customer`. */
async function refuseFor(customer: string, body: string) {
  const response = await fetch(`${system.url.api}/__sandbox/failures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 422, pathPattern: '.*', carrying: customer, times: 100, body }),
  });
  expect(response.status).toBe(201);
}

/** Delivers a signed quote event through the ingress; its acknowledgement. */
async function deliver(event: Record<string, unknown>) {
  const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signEvent(event, DEV_WEBHOOK_SECRET)),
  });
  return { status: response.status, ack: acknowledgementSchema.parse(await response.json()) };
}

/** An approved quote of its own customer, whose actions the partner refuses with `body`. */
async function refusedQuote(id: string, body: string): Promise<string> {
  const event = sampleEvent('quote', { id, status: 'approved' });
  await refuseFor(String(event.customer_id), body);
  const { status, ack } = await deliver(event);
  expect(status).toBe(200);
  return ack.webhook_id;
}

/** The store's record of `webhookId` once it is failed there. */
const failedInStore = (webhookId: string) =>
  system.poll<{ webhooks: Stored[] }>(
    `/api/webhooks?state=failed&q=${webhookId}`,
    (body) => body.webhooks.length === 1,
  );

/** Nothing set aside: every change reached the store. */
async function expectNothingSetAside() {
  const response = await system.dashboard('/api/record-changes/rejected?limit=10');
  expect(((await response.json()) as { rejected: unknown[] }).rejected).toEqual([]);
}

it("a partner's 422 body of 199 `a` and an emoji: each webhook is failed in the store, found by its state, counted failed by the ledger", async () => {
  const from = new Date().toISOString();
  const body = `${'a'.repeat(199)}😀`;
  const ids: string[] = [];
  for (const n of [1, 2, 3]) ids.push(await refusedQuote(`cut-${n}-${Date.now()}`, body));
  for (const id of ids) {
    const { webhooks } = await failedInStore(id);
    const failed = webhooks[0]!.actions.filter((action) => action.state === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    // Cut before the emoji, not inside it.
    for (const action of failed) expect(action.last_error).toMatch(/answered 422: a{199}$/);
  }
  const to = new Date(Date.now() + 60_000).toISOString();
  const ledger = await system.poll<{ failed: number; in_flight: number; balanced: boolean }>(
    `/api/ledger?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
    (answer) => answer.failed === 3,
  );
  expect(ledger).toMatchObject({ failed: 3, in_flight: 0, balanced: true });
  await expectNothingSetAside();
});

/** Characters that have broken stores: NUL, lone surrogates, invisible and fill characters. */
const UNKEEPABLE = ['\u0000', '\ud800', '\udfff', '\ud83d', '\ude00', '\udbff\udbff'];
const INVISIBLE = ['\u200b', '\u2060', '\u00ad', '\ufeff', '\u2800', '\u3164', '\u115f', '\u202e'];
const oddText = fc
  .array(
    fc.oneof(
      fc.constantFrom(...UNKEEPABLE, ...INVISIBLE, '😀', 'a', ' '),
      fc.string({ maxLength: 5 }),
    ),
    { minLength: 1, maxLength: 40 },
  )
  .map((parts) => parts.join(''))
  .filter((text) => text.trim().length > 0);

it(
  'partner error bodies, discard reasons and rule texts full of NUL, lone surrogates and invisible characters are all kept, as U+FFFD where they must',
  { timeout: 240_000 },
  async () => {
    const texts = fc.sample(oddText, { numRuns: 12, seed: 39 });
    const refused = new Map<string, string>();
    const reasons = new Map<string, string>();
    for (const [n, text] of texts.entries()) {
      refused.set(await refusedQuote(`odd-${n}-${Date.now()}`, text), text);
      reasons.set(await discardedWith(`gone-${n}-${Date.now()}`, text), text);
    }
    const rules = DEFAULT_RULES.map((rule, index) =>
      index === 0 ? { ...rule, when: [{ path: 'metadata.note', in: texts }] } : rule,
    );
    const replaced = await system.dashboard('/api/rules', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules }),
    });
    expect(replaced.status).toBe(200);

    for (const [id, text] of refused) {
      const { webhooks } = await failedInStore(id);
      const errors = webhooks[0]!.actions.map((action) => action.last_error ?? '');
      // As the worker reads it: UTF-8 decoded, a leading byte-order mark dropped.
      const expected = kept(headOf(kept(text).replace(/^\ufeff/, ''), 200));
      expect(
        errors.some((error) => error.endsWith(expected)),
        JSON.stringify({ errors, expected }),
      ).toBe(true);
    }
    const entries = await system.poll<{ entries: AuditEntry[] }>('/api/audit?limit=500', (body) =>
      body.entries.some((entry) => entry.action === 'rules_replaced'),
    );
    for (const [id, text] of reasons) {
      const entry = entries.entries.find((each) => each.target === id);
      expect(entry?.details).toMatchObject({ reason: kept(text).trim() });
    }
    const rulesEntry = entries.entries.find((entry) => entry.action === 'rules_replaced');
    expect(JSON.stringify(rulesEntry?.details)).toContain(JSON.stringify(texts.map(kept)));
    await expectNothingSetAside();
  },
);

/** A quarantined quote discarded with `reason`; its webhook id. */
async function discardedWith(id: string, reason: string): Promise<string> {
  const event = sampleEvent('quote', { id, status: 'approved' });
  const { status, ack } = await deliver({ ...event, product: { price_with_taxes: true } });
  expect([status, ack.quarantined]).toEqual([202, true]);
  await system.poll<{ webhooks: unknown[] }>(
    `/api/webhooks?state=quarantined&q=${ack.webhook_id}`,
    (body) => body.webhooks.length === 1,
  );
  const response = await system.dashboard(`/api/quarantine/${ack.webhook_id}/discard`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reason }),
  });
  expect(response.status).toBe(200);
  return ack.webhook_id;
}
