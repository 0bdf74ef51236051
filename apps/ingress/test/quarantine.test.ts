// Quarantine (docs/webhook-api.md → Quarantine) through the real HTTP surface: an authentic event
// that fails its schema is kept, in its partition, before it is answered 202 with its problems;
// no action job is added; a repeat gets the same answer and keeps nothing new; an unsigned body
// is refused as ever, and `INVALID_EVENTS=reject` keeps nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgementSchema, errorBodySchema, eventDefinitionByKind } from '@pw/shared/events';
import { decodeAck } from '@pw/shared/intake';
import { OutcomeStore } from '@pw/shared/outcomes';
import { keys } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import { signEvent, withoutSignature } from '@pw/shared/signing';
import type { EventKind } from '@pw/shared/events';
import { keysUnder, signedEvent, TEST_SECRET } from '@pw/test-utils';
import { jobCount, postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const quarantining = async (partitions = 1) =>
  (harness = await startHarness({ settings: { invalidEvents: 'quarantine' }, partitions }));

const pathOf = (kind: EventKind) => eventDefinitionByKind(kind).path;

/** A signed event of `kind` changed by `change` (then signed again: it is authentic). */
function changed(kind: EventKind, change: (event: Record<string, unknown>) => void) {
  const event = withoutSignature(signedEvent(kind));
  change(event);
  return signEvent(event, TEST_SECRET);
}

/** Each kind of schema failure the partner's payload changes make. */
const FAILURES: [string, EventKind, (event: Record<string, unknown>) => void, string][] = [
  ['a required field dropped', 'quote', (event) => delete event.customer_id, 'customer_id'],
  [
    'a field of another type',
    'quote',
    (event) => ((event.product as Record<string, unknown>).price_with_taxes = 12.5),
    'product.price_with_taxes',
  ],
  [
    'a timestamp that does not parse',
    'contract',
    (event) => (event.timestamp = 'soon'),
    'timestamp',
  ],
  [
    "another kind's event at this endpoint",
    'sales',
    (event) => (event.event_type = 'quote.status_changed'),
    'event_type',
  ],
  [
    'an entity id that is not a string',
    'contract',
    (event) => (event.contract_id = 42),
    'contract_id',
  ],
];

describe('an authentic event that fails its schema, INVALID_EVENTS=quarantine', () => {
  it.each(FAILURES)(
    'is kept and answered 202 with its problems: %s',
    async (_name, kind, change, path) => {
      const h = await quarantining();
      const event = changed(kind, change);
      const response = await postJson(h.app, pathOf(kind), event);
      expect(response.status).toBe(202);
      const ack = acknowledgementSchema.parse(response.body);
      expect(ack).toMatchObject({ received: true, actions_triggered: [], quarantined: true });
      expect(ack.problems?.map((problem) => problem.path)).toContain(path);
      // No action job; the record says quarantined; the record stream carries the event as
      // received, with its problems, for the record store.
      expect(await jobCount(h)).toBe(0);
      const outcomes = new OutcomeStore(h.inspect, { queuePrefix: h.prefix, recordTtlSeconds: 60 });
      expect(await outcomes.get(ack.webhook_id)).toMatchObject({
        webhook_id: ack.webhook_id,
        state: 'quarantined',
        actions: [],
      });
      const [[, fields] = ['', []]] = await h.inspect.xrange(recordStreamKey(h.prefix), '-', '+');
      const kept = JSON.parse(fields[fields.indexOf('d') + 1] ?? 'null') as Record<string, unknown>;
      expect(fields[fields.indexOf('k') + 1]).toBe('webhook');
      expect(kept).toMatchObject({
        webhook_id: ack.webhook_id,
        actions: [],
        event: withoutSignature(event),
        problems: ack.problems,
      });
      expect(
        await h.metrics.registry.getSingleMetricAsString('webhooks_quarantined_total'),
      ).toContain(`webhooks_quarantined_total{event_type="${eventDefinitionByKind(kind).type}"} 1`);
    },
  );

  it('answers a repeat the same, keeping nothing new and counting it a duplicate', async () => {
    const h = await quarantining();
    const event = changed('quote', (e) => delete e.customer_id);
    const first = await postJson(h.app, pathOf('quote'), event);
    const again = await postJson(h.app, pathOf('quote'), event);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(await h.inspect.xlen(recordStreamKey(h.prefix))).toBe(1);
    const quarantined = await h.metrics.registry.getSingleMetricAsString(
      'webhooks_quarantined_total',
    );
    expect(quarantined).toContain(
      'webhooks_quarantined_total{event_type="quote.status_changed"} 1',
    );
    const received = await h.metrics.registry.getSingleMetricAsString('webhooks_received_total');
    expect(received).toContain('outcome="quarantined"} 1');
    expect(received).toContain('outcome="duplicate"} 1');
    // Its deduplication entry says quarantined, in the bucket of a time that does not read.
    const [bucket] = await keysUnder(h.inspect, h.prefix, 'dedup:*');
    const [value] = Object.values(await h.inspect.hgetall(bucket!));
    expect(decodeAck(value!)).toMatchObject({ quarantined: true, actions: [] });
  });
});

describe('what quarantine leaves alone', () => {
  it('does not make the entity of a quarantined event look newer: its next valid event runs', async () => {
    const h = await quarantining();
    const now = Date.now();
    const later = signedEvent('contract', { id: 'Q-ENT', now: new Date(now), status: 'active' });
    const broken = withoutSignature(later);
    delete broken.customer_id;
    expect((await postJson(h.app, pathOf('contract'), signEvent(broken, TEST_SECRET))).status).toBe(
      202,
    );
    expect(
      await h.inspect.exists(keys.latest(h.prefix, 'contract.status_changed', 'K-Q-ENT')),
    ).toBe(0);
    const earlier = signedEvent('contract', { id: 'Q-ENT', now: new Date(now - 60_000) });
    const response = await postJson(h.app, pathOf('contract'), earlier);
    expect(response.status).toBe(200);
    const ack = acknowledgementSchema.parse(response.body);
    const outcomes = new OutcomeStore(h.inspect, { queuePrefix: h.prefix, recordTtlSeconds: 60 });
    expect(await outcomes.get(ack.webhook_id)).toMatchObject({ state: 'queued', stale: false });
    expect(await jobCount(h)).toBe(1);
  });

  it('still refuses a body whose signature does not verify, keeping nothing', async () => {
    const h = await quarantining();
    const event = { ...changed('quote', (e) => delete e.customer_id), quote_id: 'forged' };
    const response = await postJson(h.app, pathOf('quote'), event);
    expect(response.status).toBe(401);
    expect(errorBodySchema.parse(response.body).error.code).toBe('invalid_signature');
    expect(await h.inspect.exists(recordStreamKey(h.prefix))).toBe(0);
  });

  it('refuses, as stale, a quarantined event whose timestamp reads but lies outside the freshness window', async () => {
    const h = await quarantining();
    const old = changed('quote', (e) => {
      delete e.customer_id;
      e.timestamp = new Date(Date.now() - 8 * 86_400_000).toISOString();
    });
    const response = await postJson(h.app, pathOf('quote'), old);
    expect(response.status).toBe(422);
    expect(errorBodySchema.parse(response.body).error.code).toBe('timestamp_out_of_range');
    expect(await h.inspect.exists(recordStreamKey(h.prefix))).toBe(0);
  });

  it('keeps it in the partition its entity id names, among 4', async () => {
    const h = await quarantining(4);
    const event = changed('quote', (e) => delete e.customer_id);
    const ack = acknowledgementSchema.parse((await postJson(h.app, pathOf('quote'), event)).body);
    const partition = h.partitions.ofEntity(String(event.quote_id));
    expect(h.partitions.ofWebhookId(ack.webhook_id)).toBe(partition);
    expect(await h.inspect.xlen(recordStreamKey(h.partitions.prefix(partition)))).toBe(1);
  });
});

describe('INVALID_EVENTS=reject', () => {
  it('answers 422 validation_failed and keeps nothing', async () => {
    harness = await startHarness({ settings: { invalidEvents: 'reject' } });
    const response = await postJson(
      harness.app,
      pathOf('quote'),
      changed('quote', (e) => delete e.customer_id),
    );
    expect(response.status).toBe(422);
    expect(errorBodySchema.parse(response.body).error.details.map((d) => d.path)).toContain(
      'customer_id',
    );
    expect(await harness.inspect.exists(recordStreamKey(harness.prefix))).toBe(0);
    expect(await keysUnder(harness.inspect, harness.prefix, 'dedup:*')).toEqual([]);
  });
});
