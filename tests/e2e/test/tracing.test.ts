// Tracing through the real surface: npm start's apps export OTLP/HTTP to a small receiver in this
// test. A webhook posted with the sender's `traceparent` makes one trace: the ingress's request,
// its enqueue, the worker's action jobs, the partner-API call (which carries that trace's
// `traceparent`, and neither the sender's `tracestate` nor its `baggage`), and the webhook's record
// keeps the trace id.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { Acknowledgement } from '@pw/shared/events';
import { launchChromium } from '@pw/test-utils';
import type { ChildRun } from '@pw/test-utils';
import { docsPicture } from './pictures.js';
import { startNpmStart } from './system.js';
import type { RunningSystem } from './system.js';
import { waterfallPage } from './trace-waterfall.js';
import type { WaterfallSpan } from './trace-waterfall.js';

/** The trace of the first test, drawn as a waterfall (linked from docs/operations.md). */
const SCREENSHOT = fileURLToPath(new URL('../../../docs/trace.png', import.meta.url));

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface ExportRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}
interface Span extends WaterfallSpan {
  kind: number;
}

/** Every span received, with its service, by trace id; and the content types that came. */
const traces = new Map<string, Span[]>();
const contentTypes = new Set<string>();
let receiver: Server;
let system: RunningSystem<ChildRun>;

const valueOf = (value: OtlpValue) => String(value.stringValue ?? value.intValue ?? '');

function receive(body: ExportRequest): void {
  for (const { resource, scopeSpans } of body.resourceSpans) {
    const service = valueOf(
      resource.attributes.find((attribute) => attribute.key === 'service.name')?.value ?? {},
    );
    for (const span of scopeSpans.flatMap((scope) => scope.spans)) {
      const attributes = Object.fromEntries(
        (span.attributes ?? []).map(({ key, value }) => [key, valueOf(value)]),
      );
      const spans = traces.get(span.traceId) ?? [];
      spans.push({
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        service,
        name: span.name,
        startNanos: BigInt(span.startTimeUnixNano),
        endNanos: BigInt(span.endTimeUnixNano),
        kind: span.kind,
        attributes,
      });
      traces.set(span.traceId, spans);
    }
  }
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.add(String(request.headers['content-type']));
      if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/json') {
        receive(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const { port } = receiver.address() as AddressInfo;
  system = await startNpmStart({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  });
}, 120_000);
afterAll(async () => {
  await system?.stop();
  receiver?.close();
});

/** The spans of `traceId` once `condition` holds for them, checked every 100 ms for up to 20 s. */
async function traceOnce(traceId: string, condition: (spans: Span[]) => boolean): Promise<Span[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const spans = traces.get(traceId) ?? [];
    if (condition(spans)) return spans;
    if (Date.now() > deadline) {
      throw new Error(`trace ${traceId} not as awaited in 20 s: ${JSON.stringify(spans, null, 1)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The worker's request for an access token, to the identity provider's token endpoint. */
const isTokenRequest = (span: Span) =>
  (span.attributes['url.full'] ?? '').endsWith('/protocol/openid-connect/token');

/** Posts an approved quote with the sender's trace headers; its ack once it has completed. */
async function postTraced(traceId: string, senderSpanId: string): Promise<Acknowledgement> {
  const answer = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${senderSpanId}-01`,
      // The sender's own: for its systems, not the partner's.
      tracestate: 'sender=opaque-state',
      baggage: 'user.id=alice,session=s-123',
    },
    body: JSON.stringify(
      signEvent(sampleEvent('quote', { id: 'traced', status: 'approved' }), DEV_WEBHOOK_SECRET),
    ),
  });
  const ack = acknowledgementSchema.parse(await answer.json());
  await system.outcome(ack.webhook_id, (outcome) => outcome.state === 'completed');
  return ack;
}

/** The trace holds the token request, the ingress's request and enqueue, and each action. */
function expectSpansOfTheWebhook(spans: Span[], ack: Acknowledgement): void {
  // The worker's first actions needed a token: its request is in this trace (one, shared).
  expect(spans.filter(isTokenRequest)).toHaveLength(1);
  // The ingress's request (a server span), and the webhook's attributes on its handling.
  expect(spans.find((span) => span.service === 'pw-ingress' && span.kind === 2)).toMatchObject({
    attributes: { 'http.route': '/webhooks/quote-status', 'http.response.status_code': '200' },
  });
  // The enqueue (the intake adds the action jobs): a producer span, with the webhook's
  // attributes.
  const handling = spans.find((span) => span.service === 'pw-ingress' && span.kind === 4);
  expect(handling?.name).toBe('enqueue actions');
  expect(handling?.attributes).toMatchObject({
    webhook_id: ack.webhook_id,
    event_type: 'quote.status_changed',
    entity_id: 'Q-traced',
  });
  // One span per action, in the worker, in the same trace.
  const actions = spans
    .filter((span) => span.service === 'pw-worker' && span.attributes.action)
    .map((span) => span.attributes.action);
  expect(new Set(actions)).toEqual(new Set(ack.actions_triggered));
  const lock = spans.find((span) => span.attributes.action === 'lock_price');
  expect(lock?.attributes).toMatchObject({
    webhook_id: ack.webhook_id,
    attempt: '1',
    http_status: '200',
  });
}

/**
 * Each of the webhook's partner-API calls carried this trace's traceparent, and of the sender's
 * trace headers nothing else: no tracestate, no baggage.
 */
async function expectCallsCarryTheTraceOnly(ack: Acknowledgement, traceId: string) {
  const calls = (await (await fetch(`${system.url.api}/__sandbox/calls`)).json()) as {
    path: string;
    headers: Record<string, string>;
  }[];
  const webhookCalls = calls.filter((call) =>
    call.headers['idempotency-key']?.startsWith(`${ack.webhook_id}:`),
  );
  expect(webhookCalls).toHaveLength(ack.actions_triggered.length);
  for (const call of webhookCalls) {
    expect(call.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(call.headers).not.toHaveProperty('tracestate');
    expect(call.headers).not.toHaveProperty('baggage');
  }
}

/** The trace as a tracing backend would draw it, the ingress's request at the top; photographed. */
async function drawWaterfall(traceId: string, spans: Span[]): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
    await page.setContent(waterfallPage(traceId, spans));
    const rows = await page.locator('tr').allTextContents();
    expect(rows).toHaveLength(spans.length);
    expect(rows[0]).toMatch(/^\s*pw-ingress POST \/webhooks\/quote-status/);
    // Titled by the trace alone: its spans and its length differ a little from run to run.
    await docsPicture(page, SCREENSHOT, `Trace ${traceId}`);
  } finally {
    await browser.close();
  }
}

describe('tracing', { timeout: 60_000 }, () => {
  it("continues the sender's trace from the webhook request to the partner-API call", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const senderSpanId = '00f067aa0ba902b7';
    const ack = await postTraced(traceId, senderSpanId);

    // One tree: every span's parent is the sender's span or another span of the trace.
    const unparented = (all: Span[]) => {
      const ids = new Set([senderSpanId, ...all.map((span) => span.spanId)]);
      return all.filter((span) => !ids.has(span.parentSpanId));
    };
    const spans = await traceOnce(
      traceId,
      (all) =>
        all.filter((span) => span.service === 'pw-worker' && span.attributes.action).length >= 3 &&
        all.some(isTokenRequest) &&
        unparented(all).length === 0,
    );
    expectSpansOfTheWebhook(spans, ack);
    await expectCallsCarryTheTraceOnly(ack, traceId);

    // The record keeps the trace id (the console links it).
    const record = await system.poll<{ trace_id: string | null }>(
      `/api/webhooks/${ack.webhook_id}`,
      (body) => body.trace_id !== null,
    );
    expect(record.trace_id).toBe(traceId);
    expect(contentTypes).toEqual(new Set(['application/json']));

    await drawWaterfall(traceId, spans);
  });

  it('a webhook without a traceparent starts a trace of its own, and log lines carry its ids', async () => {
    const answer = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signEvent(sampleEvent('quote', { id: 'untraced' }), DEV_WEBHOOK_SECRET)),
    });
    const ack = acknowledgementSchema.parse(await answer.json());
    await system.outcome(ack.webhook_id, (outcome) => outcome.state === 'completed');
    const record = await system.poll<{ trace_id: string | null }>(
      `/api/webhooks/${ack.webhook_id}`,
      (body) => body.trace_id !== null,
    );
    const traceId = record.trace_id ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    await traceOnce(traceId, (all) => all.some((span) => span.service === 'pw-worker'));
    // npm start prints each app's lines; the worker's line about this webhook has the trace.
    await system.run.printed(traceId);
  });
});
