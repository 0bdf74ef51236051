// OpenTelemetry tracing for every app, loaded before the app with `node --import` (ESM needs the
// instrumentations' loader hook registered before express, ioredis and node:http are imported).
// Configured only by OpenTelemetry's own variables (OTEL_EXPORTER_OTLP_ENDPOINT, _PROTOCOL,
// OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...). Without an endpoint it returns at once: nothing of
// the SDK is imported and the apps pay nothing (docs/operations.md#tracing).
/* global process */

/**
 * W3C trace context, `traceparent` alone: a sender's trace is continued, but its `tracestate` is
 * neither taken in nor passed on, and no baggage is (the SDK's default propagators would carry
 * both from a webhook request to every partner-API and token call). Wraps the W3C propagator with
 * a getter and a setter that see only `traceparent`.
 */
function traceparentOnly(w3c) {
  const only = (key) => key === 'traceparent';
  return {
    inject: (context, carrier, setter) =>
      w3c.inject(context, carrier, {
        set: (target, key, value) => (only(key) ? setter.set(target, key, value) : undefined),
      }),
    extract: (context, carrier, getter) =>
      w3c.extract(context, carrier, {
        keys: (source) => getter.keys(source).filter(only),
        get: (source, key) => (only(key) ? getter.get(source, key) : undefined),
      }),
    fields: () => ['traceparent'],
  };
}

const endpoint =
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT;

if (endpoint && process.env.OTEL_SDK_DISABLED !== 'true') {
  const { register } = await import('node:module');
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK, core }, http, express, ioredis, undici] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-undici'),
  ]);
  // `apps/<app>/…`: the default service name is `pw-<app>`.
  const app = /apps[\\/]([\w-]+)[\\/]/.exec(process.argv[1] ?? '')?.[1] ?? 'app';
  const sdk = new NodeSDK({
    ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName: `pw-${app}` }),
    // Set here, so OTEL_PROPAGATORS is not read: nothing but `traceparent` crosses our edges.
    textMapPropagator: traceparentOnly(new core.W3CTraceContextPropagator()),
    instrumentations: [
      new http.HttpInstrumentation({
        // Health checks and scrapes are not deliveries.
        ignoreIncomingRequestHook: (request) =>
          /^\/(healthz|readyz|metrics)\b/.test(request.url ?? ''),
      }),
      new express.ExpressInstrumentation(),
      // Only commands made inside a span: BullMQ's blocking polls would otherwise be traces of
      // their own, several a second.
      new ioredis.IORedisInstrumentation({ requireParentSpan: true }),
      new undici.UndiciInstrumentation(),
    ],
  });
  sdk.start();
  // Read by @pw/shared (tracing.ts): BullMQ's telemetry, and the flush before a process exits.
  globalThis[Symbol.for('partner-webhooks.tracing')] = { shutdown: () => sdk.shutdown() };
}
