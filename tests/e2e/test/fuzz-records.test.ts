// Property-based, all the way to PostgreSQL: signed events with odd, long and invalid strings,
// deep objects and strange keys in every field go into npm start's ingress; each is either
// accepted and found in the record store by its entity id and its customer id, or (failing its
// schema) quarantined and found there by its webhook id with its problems, or (holding a lone
// surrogate, which has no canonical form) refused with `invalid_json`; and the ledger balances.
// One bad event must never cost the store another's record.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { EVENT_KINDS, eventDefinitionByKind, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { EventKind } from '@pw/shared/events';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

let system: RunningSystem;
beforeAll(async () => {
  system = await startSystem();
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

/** Characters that have broken stores, logs and pages: controls, NUL, bidi, quotes, surrogates' kin. */
const ODD = [
  '\u0000',
  '\u0007',
  '\n',
  '\u0085',
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  // Invisible and fill characters: blank-looking, kept as they are.
  '\u00ad',
  '\u2060',
  '\u2800',
  '\u3164',
  '\u115f',
  // Lone surrogates: no canonical form, so the ingress refuses the event (400 invalid_json).
  '\ud800',
  '\udfff',
  "'",
  '"',
  '\\',
  '%00',
  '😀',
  '𝔘',
  'ß',
  '\u0301',
  '<script>',
  "'; drop table webhooks; --",
];

/** A string of 0 to 3,000 characters, mostly printable, sometimes with the odd ones above. */
const oddString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc
    .array(fc.constantFrom(...ODD), { minLength: 1, maxLength: 6 })
    .map((parts) => `id${parts.join('x')}`),
  fc.integer({ min: 200, max: 3000 }).map((n) => 'Z'.repeat(n)),
  // Random bytes do not compress: ~2.7 KB of them once outgrew an index entry of the store.
  fc.uint8Array({ minLength: 1900, maxLength: 2400 }).map((b) => Buffer.from(b).toString('base64')),
  fc.string({ unit: 'binary', minLength: 250, maxLength: 300 }),
  fc.constantFrom('', ' ', '..', '__proto__', 'constructor'),
);

/** An object nested up to `depth` levels, whose keys are odd too. */
const deepObject = fc.integer({ min: 1, max: 28 }).chain((depth) =>
  fc
    .tuple(fc.constantFrom('k', '\u0000', '\u202ek', '__proto__', 'x'.repeat(300)), oddString)
    .map(([key, leaf]) => {
      let value: unknown = leaf;
      for (let level = 0; level < depth; level += 1) value = { [level % 2 ? key : 'n']: value };
      return value;
    }),
);

const anyValue = fc.oneof(
  { weight: 5, arbitrary: oddString },
  { weight: 1, arbitrary: deepObject },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** The dotted paths of every member of a sample event (nested ones too). */
function pathsOf(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, member]) =>
    member && typeof member === 'object' && !Array.isArray(member)
      ? [`${prefix}${key}`, ...pathsOf(member as Record<string, unknown>, `${prefix}${key}.`)]
      : [`${prefix}${key}`],
  );
}

function setAt(event: Record<string, unknown>, path: string, value: unknown): void {
  const steps = path.split('.');
  const last = steps.pop() ?? '';
  let target = event;
  for (const step of steps) {
    const next = target[step];
    // A member replaced already by a value that is not an object: nothing below it to set.
    if (typeof next !== 'object' || next === null) return;
    target = next as Record<string, unknown>;
  }
  target[last] = value;
}

/** A fresh sample with one to three members replaced, and perhaps an unknown member added. */
const generatedEvent = fc
  .tuple(
    fc.constantFrom<EventKind>(...EVENT_KINDS),
    fc.array(fc.tuple(fc.nat(), anyValue), { minLength: 1, maxLength: 3 }),
    fc.option(fc.tuple(fc.constantFrom('extra', '\u0000', '__proto__', '\u202eextra'), anyValue)),
  )
  .map(([kind, changes, extra]) => {
    const event = sampleEvent(kind);
    const paths = pathsOf(event).filter((path) => path !== 'event_type' && path !== 'timestamp');
    for (const [pick, value] of changes) setAt(event, paths[pick % paths.length] ?? 'x', value);
    if (extra) event[extra[0]] = extra[1];
    return { kind, event };
  });

/** Whether a string or key anywhere in `value` holds half of a surrogate pair alone. */
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string')
    return !(value as unknown as { isWellFormed(): boolean }).isWellFormed();
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(
    ([key, member]) => hasLoneSurrogate(key) || hasLoneSurrogate(member),
  );
}

/**
 * The event signed; one holding a lone surrogate has no canonical form to sign, so it goes with a
 * signature of its well-formed copy, as a sender whose JSON library let one through would send it.
 */
function signedAsFarAsItCan(event: Record<string, unknown>): Record<string, unknown> {
  if (!hasLoneSurrogate(event)) return signEvent(event, DEV_WEBHOOK_SECRET);
  const wellFormed = JSON.parse(JSON.stringify(event), (_key, value: unknown) =>
    typeof value === 'string'
      ? (value as unknown as { toWellFormed(): string }).toWellFormed()
      : value,
  ) as Record<string, unknown>;
  return { ...event, signature: signEvent(wellFormed, DEV_WEBHOOK_SECRET).signature };
}

interface Accepted {
  webhook_id: string;
  entity_id: string;
  customer_id: string;
}

it(
  'every generated event is found in the store, accepted by its ids or quarantined by its webhook id with its problems, and the ledger balances',
  { timeout: 300_000 },
  async () => {
    const from = new Date().toISOString();
    const accepted: Accepted[] = [];
    const quarantined: string[] = [];
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(generatedEvent, async ({ kind, event }) => {
        const definition = eventDefinitionByKind(kind);
        const response = await fetch(`${system.url.ingress}${definition.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(signedAsFarAsItCan(event)),
        });
        const body = (await response.json()) as { webhook_id?: string; error?: { code: string } };
        if (response.status === 200 && body.webhook_id) {
          accepted.push({
            webhook_id: body.webhook_id,
            entity_id: String(event[definition.entityIdField]),
            customer_id: String(event.customer_id),
          });
          return;
        }
        // A lone surrogate anywhere: no canonical form, so no signature to check; refused whole.
        if (response.status === 400) {
          expect(body.error?.code).toBe('invalid_json');
          expect(hasLoneSurrogate(event)).toBe(true);
          refused += 1;
          return;
        }
        // Authentic but failing its schema: kept (INVALID_EVENTS=quarantine, the default).
        expect([response.status, body.error?.code]).toEqual([202, undefined]);
        quarantined.push(body.webhook_id ?? '');
      }),
      { numRuns: 300 },
    );
    // Every kind of answer was generated, or the property proves little.
    expect(accepted.length).toBeGreaterThan(20);
    expect(quarantined.length).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(0);

    const to = new Date(Date.now() + 2 * 60_000).toISOString();
    const ledger = await system.poll<{
      accepted: number;
      quarantined: number;
      balanced: boolean;
      in_flight: number;
    }>(
      `/api/ledger?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
      (body) => body.accepted === accepted.length + quarantined.length && body.balanced,
    );
    expect(ledger).toMatchObject({
      accepted: accepted.length + quarantined.length,
      quarantined: quarantined.length,
      balanced: true,
    });

    // Every accepted webhook is in the store, found by what the sender knows it by.
    const missing: string[] = [];
    for (const webhook of accepted) {
      for (const filter of ['entity_id', 'customer_id'] as const) {
        const query = new URLSearchParams({ [filter]: webhook[filter], limit: '500' });
        const response = await system.dashboard(`/api/webhooks?${query.toString()}`);
        const found = (await response.json()) as { webhooks?: { webhook_id: string }[] };
        if (!found.webhooks?.some((stored) => stored.webhook_id === webhook.webhook_id))
          missing.push(`${webhook.webhook_id} by ${filter}: ${response.status}`);
      }
    }
    // Every quarantined one too, with its event and why it failed.
    for (const webhookId of quarantined) {
      const response = await system.dashboard(`/api/webhooks/${webhookId}`);
      const stored = (await response.json()) as {
        state?: string;
        event?: unknown;
        problems?: unknown[] | null;
      };
      if (stored.state !== 'quarantined' || !stored.event || !stored.problems?.length)
        missing.push(`${webhookId}: ${response.status} ${JSON.stringify(stored).slice(0, 200)}`);
    }
    expect(missing).toEqual([]);
  },
);
