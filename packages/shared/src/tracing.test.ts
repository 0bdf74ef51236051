// Tracing's bootstrap (tracing/register.mjs) in a real node process: without an OTLP endpoint it
// loads nothing of the SDK (the apps pay nothing); with one, the SDK runs and the apps see it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

/** What `probe` (ES module code) prints in a node process started with the bootstrap. */
async function probed(probe: string, env: Record<string, string>): Promise<unknown> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')),
  );
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', './tracing/register.mjs', '--input-type=module', '-e', probe],
    { cwd: PACKAGE, env: { ...base, ...env } },
  );
  return JSON.parse(stdout);
}

/** What a process started with the bootstrap has loaded, given the OTEL variables in `env`. */
async function loaded(env: Record<string, string>): Promise<{ tracing: boolean; sdk: boolean }> {
  const probe = `
    import { createRequire } from 'node:module';
    const required = Object.keys(createRequire(process.cwd() + '/probe.js').cache);
    console.log(JSON.stringify({
      tracing: globalThis[Symbol.for('partner-webhooks.tracing')] !== undefined,
      sdk: required.some((path) => path.includes('@opentelemetry/sdk-node')),
    }));
    await globalThis[Symbol.for('partner-webhooks.tracing')]?.shutdown();`;
  return (await probed(probe, env)) as { tracing: boolean; sdk: boolean };
}

// Each probe is a node process that may load the whole SDK: seconds on a busy machine.
describe('the tracing bootstrap', { timeout: 60_000 }, () => {
  it('loads nothing of the SDK without an OTLP endpoint', async () => {
    expect(await loaded({})).toEqual({ tracing: false, sdk: false });
  });

  it('starts the SDK with OTEL_EXPORTER_OTLP_ENDPOINT (or the traces endpoint) set', async () => {
    const endpoint = 'http://127.0.0.1:9';
    const [general, traces, disabled] = await Promise.all([
      loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
      loaded({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint }),
      loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'true' }),
    ]);
    expect(general).toEqual({ tracing: true, sdk: true });
    expect(traces).toEqual({ tracing: true, sdk: true });
    expect(disabled).toEqual({ tracing: false, sdk: false });
  });

  it("continues a sender's traceparent, and takes in and passes on nothing else of its headers", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // What a request's headers become in the next call's: through the global propagator.
    const probe = `
      import { context, propagation } from '@opentelemetry/api';
      const incoming = {
        traceparent: '${traceparent}',
        tracestate: 'sender=opaque-state',
        baggage: 'user.id=alice',
      };
      const extracted = propagation.extract(context.active(), incoming);
      const outgoing = {};
      propagation.inject(extracted, outgoing);
      console.log(JSON.stringify({
        outgoing,
        baggage: propagation.getBaggage(extracted)?.getAllEntries() ?? [],
        fields: propagation.fields(),
      }));
      await globalThis[Symbol.for('partner-webhooks.tracing')]?.shutdown();`;
    expect(await probed(probe, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toEqual({
      outgoing: { traceparent },
      baggage: [],
      fields: ['traceparent'],
    });
  });
});
