// Property-based: whatever a broken sender or an attacker posts, the answer is one of the
// contract's 4xx codes (or 200 for what really is a valid event), never a 5xx, and nothing but
// accepted events reaches the queue.
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgementSchema,
  errorBodySchema,
  EVENT_KINDS,
  eventDefinitionByKind,
  sampleEvent,
} from '@pw/shared/events';
import { OutcomeStore } from '@pw/shared/outcomes';
import { recordStreamKey } from '@pw/shared/records';
import { signEvent, withoutSignature } from '@pw/shared/signing';
import { TEST_SECRET } from '@pw/test-utils';
import { jobCount, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const REFUSALS = new Map([
  [400, ['invalid_json']],
  [401, ['invalid_signature']],
  [413, ['payload_too_large']],
  [415, ['unsupported_media_type']],
  [422, ['validation_failed', 'timestamp_out_of_range']],
]);

/** JSON that JSON.parse accepts but that has no canonical form, or is past the shape limits. */
const POISON = [
  '"\\ud800"',
  '"x\\udfff"',
  '{"\\udbff":1}',
  '1e400',
  '-1e999',
  `${'['.repeat(40)}1${']'.repeat(40)}`,
  `[${'0,'.repeat(1999)}0]`,
];

/** Ids that would leave their path segment, and names of Object.prototype's members. */
const HOSTILE_IDS = [
  '.',
  '..',
  '%2e%2e',
  '%2E.',
  '%252e%252e',
  '',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
];

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({ settings: { maxBodyBytes: 4096 } });
});
afterAll(async () => {
  await harness.close();
});

const kind = fc.constantFrom(...EVENT_KINDS);
const contentType = fc.oneof(
  fc.constant('application/json'),
  fc.constant('application/json; charset=utf-8'),
  fc.constantFrom(
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    '',
  ),
  fc.string({ maxLength: 40 }),
);

/** A valid event with one member replaced, removed or added: signed, so the schema is reached. */
const mutatedEvent = fc
  .tuple(
    kind,
    fc.string({ minLength: 1, maxLength: 20 }),
    fc.option(fc.jsonValue({ maxDepth: 3 })),
    fc.boolean(),
  )
  .map(([k, key, value, pickExisting]) => {
    const event = sampleEvent(k);
    const keys = Object.keys(event);
    const target = pickExisting ? keys[key.length % keys.length]! : key;
    if (value === null) delete event[target];
    else event[target] = value;
    return { kind: k, body: JSON.stringify(signEvent(event, TEST_SECRET)) };
  });

/** A signed event with hostile ids or markets: valid, so it must be accepted and run safely. */
const hostileEvent = fc
  .tuple(kind, fc.constantFrom(...HOSTILE_IDS), fc.constantFrom(...HOSTILE_IDS))
  .map(([k, id, market]) => {
    const definition = eventDefinitionByKind(k);
    const event = sampleEvent(k);
    event[definition.entityIdField] = id;
    event.metadata = { ...(event.metadata as object), market };
    return { kind: k, body: JSON.stringify(signEvent(event, TEST_SECRET)) };
  });

/** A signed event with one poisonous member spliced into its text (a `__proto__` key too). */
const poisoned = fc
  .tuple(
    kind,
    fc.constantFrom(...POISON, '{"polluted":true}'),
    fc.constantFrom('extra', '__proto__'),
  )
  .map(([k, poison, key]) => {
    const text = JSON.stringify(signEvent(sampleEvent(k), TEST_SECRET));
    return { kind: k, body: `${text.slice(0, -1)},"${key}":${poison}}` };
  });

const garbage = fc
  .tuple(
    kind,
    fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.json({ maxDepth: 4 }),
      fc.string({ minLength: 4097, maxLength: 6000 }),
      fc.constant('['.repeat(3000)),
      fc.integer({ min: 1, max: 2000 }).map((n) => `${'['.repeat(n)}1${']'.repeat(n)}`),
      fc.integer({ min: 1, max: 2040 }).map((n) => `{"a":[${'1,'.repeat(n)}1]}`),
      kind.map((k) =>
        JSON.stringify({ ...sampleEvent(k), signature: 'sha256=' + 'ab'.repeat(32) }),
      ),
      fc
        .string({ maxLength: 80 })
        .chain((signature) => kind.map((k) => JSON.stringify({ ...sampleEvent(k), signature }))),
    ),
  )
  .map(([k, body]) => ({ kind: k, body }));

describe('fuzzing the webhook endpoints', { timeout: 120_000 }, () => {
  it('answers every malformed request with a contract 4xx, never a 5xx, and enqueues only what it accepts', async () => {
    const accepted = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(mutatedEvent, garbage, hostileEvent, poisoned),
        contentType,
        async ({ kind: k, body }, type) => {
          const definition = eventDefinitionByKind(k);
          const response = await request(harness.app)
            .post(definition.path)
            .set('content-type', type)
            .send(body);
          if (response.status === 200) {
            // Only a real event of this endpoint may get through.
            expect(type.toLowerCase()).toMatch(/^application\/json/);
            const sent = JSON.parse(body) as Record<string, unknown>;
            expect(definition.schema.safeParse(sent).success).toBe(true);
            expect(withoutSignature(sent).event_type).toBe(definition.type);
            accepted.add((response.body as { webhook_id: string }).webhook_id);
            return;
          }
          expect(REFUSALS.has(response.status), `status ${response.status}`).toBe(true);
          const error = errorBodySchema.parse(response.body);
          expect(REFUSALS.get(response.status)).toContain(error.error.code);
        },
      ),
      { numRuns: 1500 },
    );
    expect(await jobCount(harness)).toBe(accepted.size);
    // A `__proto__` member in a body is data, never the prototype of anything.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('fuzzing with INVALID_EVENTS=quarantine', { timeout: 120_000 }, () => {
  it('keeps every authentic event that fails its schema (202, its record, its stream entry) or refuses it with a 4xx: none is lost silently', async () => {
    const h = await startHarness({
      settings: { maxBodyBytes: 4096, invalidEvents: 'quarantine' },
    });
    const outcomes = new OutcomeStore(h.inspect, { queuePrefix: h.prefix, recordTtlSeconds: 60 });
    const kept = new Set<string>();
    const accepted = new Set<string>();
    try {
      await fc.assert(
        fc.asyncProperty(mutatedEvent, async ({ kind: k, body }) => {
          const definition = eventDefinitionByKind(k);
          const response = await request(h.app)
            .post(definition.path)
            .set('content-type', 'application/json')
            .send(body);
          const sent = JSON.parse(body) as Record<string, unknown>;
          const valid = definition.schema.safeParse(sent).success;
          if (response.status === 200 || response.status === 202) {
            const ack = acknowledgementSchema.parse(response.body);
            // 202 exactly for what fails the schema, and then kept, with no action.
            expect(response.status === 202).toBe(!valid);
            expect(ack.quarantined === true).toBe(!valid);
            if (valid) {
              accepted.add(ack.webhook_id);
              return;
            }
            expect(ack.actions_triggered).toEqual([]);
            expect(ack.problems?.length).toBeGreaterThan(0);
            expect((await outcomes.get(ack.webhook_id))?.state).toBe('quarantined');
            kept.add(ack.webhook_id);
            return;
          }
          // Refused: only a freshness refusal (a timestamp that reads, outside the window) or a
          // body the sender cannot have meant (too large); never a 5xx.
          expect(REFUSALS.has(response.status), `status ${response.status}`).toBe(true);
          expect(errorBodySchema.parse(response.body).error.code).toMatch(
            /^(timestamp_out_of_range|payload_too_large|invalid_json)$/,
          );
        }),
        { numRuns: 400 },
      );
      expect(kept.size).toBeGreaterThan(0);
      // Every kept and accepted webhook has its one entry in the record stream, and the accepted
      // ones alone have jobs.
      const entries = await h.inspect.xrange(recordStreamKey(h.prefix), '-', '+');
      const ids = new Set(
        entries.map(([, fields]) => {
          const data = JSON.parse(fields[fields.indexOf('d') + 1] ?? '{}') as {
            webhook_id: string;
          };
          return data.webhook_id;
        }),
      );
      for (const id of [...kept, ...accepted]) expect(ids.has(id), id).toBe(true);
      expect(await jobCount(h)).toBe(accepted.size);
    } finally {
      await h.close();
    }
  });
});
