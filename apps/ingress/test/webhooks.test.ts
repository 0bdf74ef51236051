import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  acknowledgementSchema,
  errorBodySchema,
  EVENT_REGISTRY,
  eventDefinitionByKind,
} from '@pw/shared/events';
import { RATE_LIMIT_HEADERS } from '@pw/shared/openapi';
import { OutcomeStore } from '@pw/shared/outcomes';
import { actionJobId } from '@pw/shared/queue';
import { DEFAULT_RULES } from '@pw/shared/rules';
import { sign, signEvent, withoutSignature } from '@pw/shared/signing';
import type { EventKind } from '@pw/shared/events';
import { keysUnder, ROTATED_SECRET, signedEvent, TEST_SECRET } from '@pw/test-utils';
import { actionJobsOf, jobCount, postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const KINDS: EventKind[] = ['quote', 'contract', 'sales'];
const pathOf = (kind: EventKind) => eventDefinitionByKind(kind).path;

let harness: Harness;
beforeEach(async () => {
  harness = await startHarness();
});
afterEach(async () => {
  await harness.close();
});

const post = (path: string, body: unknown) => postJson(harness.app, path, body);
/** The outcome records, as the dashboard reads them. */
const records = () =>
  new OutcomeStore(harness.inspect, { queuePrefix: harness.prefix, recordTtlSeconds: 60 });

/** A rejection has the contract's body, and left nothing behind in Redis. */
async function expectRejected(response: request.Response, status: number, code: string) {
  expect(response.status).toBe(status);
  const body = errorBodySchema.parse(response.body);
  expect(body.error.code).toBe(code);
  expect(await jobCount(harness)).toBe(0);
  expect(await keysUnder(harness.inspect, harness.prefix, 'dedup:*')).toEqual([]);
  return body;
}

describe.each(KINDS)('%s endpoint', (kind) => {
  it('acknowledges a valid signed event after enqueuing it with its actions', async () => {
    const event = resign({ ...signedEvent(kind), unknown_member: { nested: true } });
    const response = await post(pathOf(kind), event);
    expect(response.status).toBe(200);
    const ack = acknowledgementSchema.parse(response.body);
    const jobs = await actionJobsOf(harness, ack);
    expect(ack.actions_triggered.length).toBeGreaterThan(0);
    expect(jobs.map((job) => job?.name)).toEqual(ack.actions_triggered);
    for (const job of jobs) {
      expect(job?.data.webhook_id).toBe(ack.webhook_id);
      expect(job?.data.event).toMatchObject({ unknown_member: { nested: true } });
      expect(job?.data.event).not.toHaveProperty('signature');
    }
    expect(await jobCount(harness)).toBe(1);
  });

  it('opens the outcome record with the ack: queued, every action of the ack waiting', async () => {
    const event = signedEvent(kind, { status: kind === 'sales' ? 'converted' : 'active' });
    const ack = acknowledgementSchema.parse((await post(pathOf(kind), event)).body);
    const outcome = await records().get(ack.webhook_id);
    expect(outcome).toMatchObject({
      webhook_id: ack.webhook_id,
      event_type: EVENT_REGISTRY[eventDefinitionByKind(kind).type].type,
      received_at: ack.processed_at,
      state: 'queued',
    });
    expect(outcome?.actions.map((action) => [action.name, action.state])).toEqual(
      ack.actions_triggered.map((name) => [name, 'waiting']),
    );
  });

  it('rejects a body that is not a JSON object with 422', async () => {
    for (const body of ['[1,2]', '"text"', '42', 'null']) {
      const response = await request(harness.app)
        .post(pathOf(kind))
        .set('content-type', 'application/json')
        .send(body);
      await expectRejected(response, 422, 'validation_failed');
    }
  });

  it('rejects the wrong event_type for the endpoint with 422 naming event_type', async () => {
    const other = kind === 'quote' ? 'contract.status_changed' : 'quote.status_changed';
    const event = signedEvent(kind);
    const body = await expectRejected(
      await post(pathOf(kind), resign({ ...event, event_type: other })),
      422,
      'validation_failed',
    );
    expect(body.error.details.map((d) => d.path)).toContain('event_type');
  });

  it('rejects a missing signature with 401 before looking at the schema', async () => {
    await expectRejected(await post(pathOf(kind), { not: 'an event' }), 401, 'invalid_signature');
  });
});

/** Sets a dotted path (`product.price_with_taxes`) inside an event. */
function setAt(event: Record<string, unknown>, path: string, value: unknown) {
  const steps = path.split('.');
  const last = steps.pop()!;
  let target = event;
  for (const step of steps) target = (target[step] ??= {}) as Record<string, unknown>;
  target[last] = value;
}

/** Signs over the keys in the order given (the serialisation a sender may use). */
function signWith(event: Record<string, unknown>, secret: string) {
  return sign(JSON.stringify(event), secret);
}

/** The event with its signature made again over its current content. */
function resign(event: Record<string, unknown>, secret = TEST_SECRET) {
  return signEvent(event, secret);
}

/** Re-signs a mutated event so the request reaches the schema. */
const mutated = (kind: EventKind, change: (event: Record<string, unknown>) => void) => {
  const event = withoutSignature(signedEvent(kind));
  change(event);
  return { ...event, signature: signWith(event, TEST_SECRET) };
};

const REQUIRED: Record<EventKind, string[]> = {
  quote: ['event_type', 'quote_id', 'status', 'timestamp', 'customer_id'],
  contract: ['event_type', 'contract_id', 'status', 'timestamp', 'customer_id'],
  sales: ['event_type', 'sales_id', 'opportunity_status', 'timestamp', 'customer_id'],
};

describe('validation', () => {
  for (const kind of KINDS) {
    it.each(REQUIRED[kind])(`${kind}: a missing %s gives 422 naming it`, async (field) => {
      const body = await expectRejected(
        await post(
          pathOf(kind),
          mutated(kind, (e) => delete e[field]),
        ),
        422,
        'validation_failed',
      );
      expect(body.error.details.map((d) => d.path)).toEqual([field]);
    });
  }

  it.each([
    ['quote', 'product.price_with_taxes', '12.5'],
    ['quote', 'product.price_with_taxes', 12.5],
    ['quote', 'timestamp', 'yesterday'],
    ['quote', 'timestamp', '2026-11-21T10:00:00'],
    ['quote', 'expiry_date', '31/12/2026'],
    ['contract', 'effective_date', 'soon'],
    ['contract', 'metadata.market', 7],
    ['sales', 'metadata.conversion_time_days', 1.5],
    ['sales', 'conversion_details.conversion_value', '1249.90'],
    ['sales', 'previous_status', 3],
  ] as const)('%s: %s = %j gives 422 naming it', async (kind, path, value) => {
    const body = await expectRejected(
      await post(
        pathOf(kind),
        mutated(kind, (e) => setAt(e, path, value)),
      ),
      422,
      'validation_failed',
    );
    expect(body.error.details.map((d) => d.path)).toEqual([path]);
  });

  it.each([
    // An id of ~2.7 KB that does not compress once stopped the record store (PostgreSQL
    // refused its index entry): identifiers are 1-256 characters, no control characters.
    ['quote', 'quote_id', '2,700 random characters', randomBytes(2025).toString('base64')],
    ['contract', 'customer_id', '257 characters', 'c'.repeat(257)],
    ['sales', 'sales_agent', 'a C1 control', 'agent\u0085'],
    ['quote', 'metadata.partner_id', 'empty', ''],
    ['contract', 'product.policy_id', 'a newline', 'policy\n'],
    ['quote', 'quote_ref_code', 'DEL', 'ref\u007f'],
    // No string anywhere may hold U+0000, which PostgreSQL cannot store.
    ['sales', 'pipeline_stage', 'U+0000', 'stage\u0000'],
    ['quote', 'note.text', 'U+0000 (an unknown member)', 'unknown member\u0000'],
  ] as const)('%s: %s with %s gives 422 naming it', async (kind, path, _what, value) => {
    const body = await expectRejected(
      await post(
        pathOf(kind),
        mutated(kind, (e) => setAt(e, path, value)),
      ),
      422,
      'validation_failed',
    );
    expect(body.error.details.map((d) => d.path)).toEqual([path]);
  });

  it('accepts a creation without previous_status, or with null, and dates with offsets', async () => {
    // The receiver's present, written at +02:00: a fixed date would leave the freshness window.
    const inOffset = new Date(Date.now() + 7_200_000).toISOString().replace('Z', '+02:00');
    const cases = [
      mutated('quote', (e) => delete e.previous_status),
      mutated('contract', (e) => (e.previous_status = null)),
      mutated('sales', (e) => (e.timestamp = inOffset)),
      mutated('contract', (e) => (e.expiry_date = '2027-01-01T00:00:00')),
    ];
    const paths = [pathOf('quote'), pathOf('contract'), pathOf('sales'), pathOf('contract')];
    for (const [i, event] of cases.entries()) {
      expect((await post(paths[i]!, event)).status).toBe(200);
    }
  });
});

describe('transport checks, in the contract order', () => {
  const path = pathOf('quote');

  it('415 for a body that is not declared application/json', async () => {
    const event = JSON.stringify(signedEvent('quote'));
    await expectRejected(
      await request(harness.app).post(path).set('content-type', 'text/plain').send(event),
      415,
      'unsupported_media_type',
    );
    await expectRejected(
      await request(harness.app)
        .post(path)
        .set('content-type', 'application/json; charset=latin1')
        .send(event),
      415,
      'unsupported_media_type',
    );
  });

  it('413 for a body over MAX_BODY_BYTES, even when it is not JSON', async () => {
    await harness.close();
    harness = await startHarness({ settings: { maxBodyBytes: 1024 } });
    const big = { ...signedEvent('quote'), padding: 'x'.repeat(2000) };
    await expectRejected(await post(path, big), 413, 'payload_too_large');
    await expectRejected(
      await request(harness.app)
        .post(path)
        .set('content-type', 'application/json')
        .send('{'.repeat(5000)),
      413,
      'payload_too_large',
    );
  });

  it('400 for a body that is not JSON, and for an empty body', async () => {
    for (const body of ['{"quote_id": ', 'not json', '']) {
      const response = await request(harness.app)
        .post(path)
        .set('content-type', 'application/json')
        .send(body);
      await expectRejected(response, 400, 'invalid_json');
    }
  });

  it('a charset=utf-8 parameter is fine', async () => {
    const response = await request(harness.app)
      .post(path)
      .set('content-type', 'application/json; charset=UTF-8')
      .send(JSON.stringify(signedEvent('quote')));
    expect(response.status).toBe(200);
  });

  it('405 for another method on a webhook path, 404 elsewhere', async () => {
    expect((await request(harness.app).get(path)).status).toBe(405);
    const missing = await request(harness.app).post('/webhooks/nothing').send({});
    expect(missing.status).toBe(404);
    expect(errorBodySchema.parse(missing.body).error.code).toBe('not_found');
  });
});

describe('signatures', () => {
  const path = pathOf('contract');

  it('401 for a bad, a malformed or a non-string signature', async () => {
    const event = signedEvent('contract');
    const wrongSecret = signedEvent('contract', { secret: 'not-our-secret' });
    const tampered = { ...event, customer_id: 'someone-else' };
    for (const body of [
      wrongSecret,
      tampered,
      { ...event, signature: 'sha256=abc' },
      { ...event, signature: event.signature.replace('sha256=', 'sha1=') },
      { ...event, signature: 42 },
    ]) {
      await expectRejected(await post(path, body), 401, 'invalid_signature');
    }
  });

  it('accepts a signature by the rotated (second) secret', async () => {
    expect((await post(path, signedEvent('contract', { secret: ROTATED_SECRET }))).status).toBe(
      200,
    );
  });

  it('accepts a signature over the keys in the order received', async () => {
    const unsigned = withoutSignature(signedEvent('contract'));
    const reversed = Object.fromEntries(Object.entries(unsigned).reverse());
    const body = { ...reversed, signature: signWith(reversed, TEST_SECRET) };
    expect((await post(path, body)).status).toBe(200);
  });

  it('with SIGNATURE_MODE=off, an unsigned event is accepted', async () => {
    await harness.close();
    harness = await startHarness({ settings: { signatureMode: 'off' } });
    expect((await post(path, withoutSignature(signedEvent('contract')))).status).toBe(200);
  });
});

describe('routing rules decide actions_triggered', () => {
  it.each([
    ['quote', 'approved', ['notify_customer', 'update_sales_opportunity', 'lock_price']],
    ['quote', 'APPROVED', ['notify_customer', 'update_sales_opportunity', 'lock_price']],
    ['quote', 'sent', ['notify_customer', 'update_sales_opportunity']],
    [
      'contract',
      'active',
      ['generate_documents', 'send_welcome_message', 'activate_service', 'start_billing'],
    ],
    ['contract', 'signed', ['generate_documents']],
    ['sales', 'converted', ['update_crm', 'calculate_commission', 'update_metrics']],
    ['sales', 'Qualified', ['update_crm', 'start_follow_up_sequence']],
    ['sales', 'created', ['update_crm', 'start_follow_up_sequence']],
    ['sales', 'lost', ['update_crm']],
  ] as const)('%s with status %s', async (kind, status, actions) => {
    const response = await post(pathOf(kind), signedEvent(kind, { status }));
    expect(acknowledgementSchema.parse(response.body).actions_triggered).toEqual(actions);
  });
});

describe('out-of-order events', () => {
  it('an event older than one already taken in for its entity is queued with its record marked stale', async () => {
    const path = pathOf('contract');
    const id = `order-${Date.now()}`;
    const newer = new Date(Date.now() - 1000);
    const older = new Date(Date.now() - 60_000);
    const first = acknowledgementSchema.parse(
      (await post(path, signedEvent('contract', { id, status: 'active', now: newer }))).body,
    );
    const late = acknowledgementSchema.parse(
      (await post(path, signedEvent('contract', { id, status: 'draft', now: older }))).body,
    );
    expect((await records().get(first.webhook_id))?.stale).toBe(false);
    expect((await records().get(late.webhook_id))?.stale).toBe(true);
    // The entity's newest time is the newer event's: the worker's out-of-order check reads it.
    const [latest] = await keysUnder(harness.inspect, harness.prefix, 'latest:*');
    expect(Number(await harness.inspect.get(latest!))).toBe(newer.getTime());
    // Both are queued: the worker skips the late one's state-changing actions.
    expect(await actionJobsOf(harness, late)).not.toContain(undefined);
  });
});

describe('duplicates', () => {
  const path = pathOf('sales');

  it('a repeated delivery gets the first ack unchanged and enqueues nothing', async () => {
    const event = signedEvent('sales', { status: 'converted' });
    const first = await post(path, event);
    const again = await post(path, event);
    // The same event signed by the rotated secret is the same event.
    const third = await post(path, resign(event, ROTATED_SECRET));
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(third.body).toEqual(first.body);
    expect(await jobCount(harness)).toBe(1);
  });

  it('a repeat opens no record under a webhook id of its own', async () => {
    const event = signedEvent('sales');
    const first = acknowledgementSchema.parse((await post(path, event)).body);
    const seen: string[] = [];
    const spy = harness.inspect.duplicate();
    spy.on('message', (_channel: string, id: string) => seen.push(id));
    await spy.subscribe(records().channel);
    await post(path, event);
    // A different event, whose record is announced after the repeat's would have been.
    const other = acknowledgementSchema.parse((await post(path, signedEvent('sales'))).body);
    await expect.poll(() => seen).toContain(other.webhook_id);
    spy.disconnect();
    expect(seen).toEqual([other.webhook_id]);
    expect(first.webhook_id).not.toBe(other.webhook_id);
    const outcomeKeys = await keysUnder(harness.inspect, harness.prefix, 'outcome:*');
    expect(outcomeKeys).toHaveLength(2);
  });

  it('20 concurrent deliveries of one event make one job and one webhook_id', async () => {
    const event = signedEvent('sales');
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(path, event)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const acks = responses.map((r) => acknowledgementSchema.parse(r.body));
    expect(new Set(acks.map((ack) => ack.webhook_id)).size).toBe(1);
    expect(new Set(acks.map((ack) => ack.processed_at)).size).toBe(1);
    expect(await jobCount(harness)).toBe(1);
  });

  it('distinct events get distinct, unguessable webhook ids', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(path, signedEvent('sales'))),
    );
    const ids = responses.map((r) => acknowledgementSchema.parse(r.body).webhook_id);
    expect(new Set(ids).size).toBe(10);
    for (const id of ids) expect(Buffer.from(id.slice(3), 'base64url')).toHaveLength(16);
    expect(await jobCount(harness)).toBe(10);
  });
});

describe('duplicates, when the rules changed since the first delivery', () => {
  const path = pathOf('sales');

  it('a repeat adds no action job, even one the rules chose only since the first delivery', async () => {
    const rules = [...DEFAULT_RULES];
    const ingress = await startHarness({ rules });
    try {
      const event = signedEvent('sales', { status: 'lost' });
      const first = acknowledgementSchema.parse((await postJson(ingress.app, path, event)).body);
      expect(first.actions_triggered).toEqual(['update_crm']);
      // Since then, every sales event also triggers update_metrics.
      rules.push({
        event_type: 'sales_opportunity.status_changed',
        action: 'update_metrics',
        enabled: true,
        when: [],
      });
      const again = await postJson(ingress.app, path, event);
      expect(again.body).toEqual(first);
      expect(await ingress.queue.getJobCounts()).toMatchObject({ waiting: 1 });
      expect((await ingress.queue.getJobs()).map((job) => job.id)).toEqual([
        actionJobId(first.webhook_id, 'update_crm'),
      ]);
      // A new event does get the new rule's action.
      const other = acknowledgementSchema.parse(
        (await postJson(ingress.app, path, signedEvent('sales', { status: 'lost' }))).body,
      );
      expect(other.actions_triggered).toEqual(['update_crm', 'update_metrics']);
      expect(await actionJobsOf(ingress, other)).not.toContain(undefined);
    } finally {
      await ingress.close();
    }
  });
});

describe('rate limit', () => {
  it('429 with Retry-After over INGRESS_RATE_LIMIT, nothing enqueued for it', async () => {
    await harness.close();
    harness = await startHarness({ settings: { rateLimitPerSecond: 3 } });
    const responses = [];
    for (let i = 0; i < 5; i++) responses.push(await post(pathOf('quote'), signedEvent('quote')));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(Number(limited[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(errorBodySchema.parse(limited[0]!.body).error.code).toBe('rate_limited');
    expect(await jobCount(harness)).toBe(5 - limited.length);
    // The rate-limit headers the API document lists, on the accepted answers and the refused.
    const documented = Object.keys(RATE_LIMIT_HEADERS);
    expect(documented.length).toBeGreaterThan(0);
    for (const response of [responses[0]!, limited[0]!]) {
      for (const name of documented)
        expect(response.headers[name.toLowerCase()], name).toBeDefined();
    }
    expect(limited[0]!.headers['ratelimit-remaining']).toBe('0');
  });
});

describe('security headers', () => {
  it('every answer carries the usual security headers and no X-Powered-By', async () => {
    const response = await post(pathOf('quote'), signedEvent('quote'));
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['strict-transport-security']).toBeDefined();
    expect(response.headers['content-security-policy']).toBeDefined();
    expect(response.headers['x-powered-by']).toBeUndefined();
  });
});

describe('health and metrics', () => {
  it('/healthz and /readyz answer 200 with Redis up', async () => {
    expect((await request(harness.app).get('/healthz')).status).toBe(200);
    expect((await request(harness.app).get('/readyz')).body).toEqual({ status: 'ready' });
  });

  it('/metrics counts requests by event type and outcome', async () => {
    const event = signedEvent('quote');
    await post(pathOf('quote'), event);
    await post(pathOf('quote'), event);
    await post(pathOf('quote'), { ...event, signature: 'sha256=00' });
    const text = (await request(harness.app).get('/metrics')).text;
    const type = EVENT_REGISTRY['quote.status_changed'].type;
    expect(text).toContain(`webhooks_received_total{event_type="${type}",outcome="accepted"} 1`);
    expect(text).toContain(`webhooks_received_total{event_type="${type}",outcome="duplicate"} 1`);
    expect(text).toContain(
      `webhooks_received_total{event_type="${type}",outcome="invalid_signature"} 1`,
    );
    expect(text).toContain('webhook_response_seconds_bucket');
  });
});
