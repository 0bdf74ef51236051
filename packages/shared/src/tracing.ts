import {
  context,
  isSpanContextValid,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { BullMQOtel } from 'bullmq-otel';

// What the apps do with tracing once `tracing/register.mjs` has started the SDK (an OTLP endpoint
// is set). Without it every function here is a cheap no-op: @opentelemetry/api without an SDK
// has no active span, and BullMQ gets no telemetry.

interface Tracing {
  shutdown(): Promise<void>;
}

const tracing = () =>
  (globalThis as Record<symbol, Tracing | undefined>)[Symbol.for('partner-webhooks.tracing')];

/** True when the SDK runs in this process. */
export const tracingOn = (): boolean => tracing() !== undefined;

/** BullMQ's `telemetry` option for a Queue or Worker: spans and context across jobs, when on. */
export function bullmqTelemetry(): { telemetry: BullMQOtel } | Record<string, never> {
  return tracingOn() ? { telemetry: new BullMQOtel({ tracerName: 'partner-webhooks' }) } : {};
}

/** Sets attributes on the active span (the request's, the job's), if there is one. */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span's trace and span id, for a log line; none without a span. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  if (!span || !isSpanContextValid(span)) return {};
  return { trace_id: span.traceId, span_id: span.spanId };
}

/**
 * The active context as BullMQ's telemetry metadata (a W3C `traceparent` carrier, as JSON), for
 * a job added without `queue.add` (the ingress's own add script); undefined without a span. Only
 * `traceparent` is kept: a sender's `tracestate` or baggage never reaches the job.
 */
export function jobTraceMetadata(): string | undefined {
  if (!trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? JSON.stringify({ traceparent: carrier.traceparent }) : undefined;
}

/**
 * Runs `work` in a producer span of its own (an enqueue), ended when it settles and marked failed
 * if it throws; with tracing off, just runs it.
 */
export async function inProducerSpan<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return work();
  const kind = SpanKind.PRODUCER;
  return trace.getTracer('partner-webhooks').startActiveSpan(name, { kind }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Exports the spans still buffered; before a process exits. */
export async function flushTracing(): Promise<void> {
  await tracing()?.shutdown();
}
