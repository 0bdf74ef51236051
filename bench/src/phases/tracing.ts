// Tracing's cost, in rounds of its own (docs/performance.md): the ingress (one process) and the
// worker draining a backlog of its own, each in four modes: without the tracing bootstrap, with it but no
// endpoint (tracing off, as shipped), and exporting every trace or one in ten to an OTLP/HTTP sink
// in this process.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchRun } from '../bench-run.js';
import { measure } from '../measure.js';
import { startIngress, startWorker, whileUp } from '../processes.js';
import type { Sandbox } from '../processes.js';
import type { Figures } from '../results.js';
import { backlogSize, drainRate, freshBacklog } from './worker-drain.js';

const BOOTSTRAP = ['--import', './packages/shared/tracing/register.mjs'];

type Mode = 'plain' | 'off' | 'full' | 'tenth';

/** How each mode starts a process: node's arguments and the environment's OTEL variables. */
function modes(endpoint: string): Record<Mode, { args: string[]; env: Record<string, string> }> {
  const sampled = (share: string) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: share,
  });
  return {
    plain: { args: [], env: {} },
    off: { args: BOOTSTRAP, env: {} },
    full: { args: BOOTSTRAP, env: sampled('1') },
    tenth: { args: BOOTSTRAP, env: sampled('0.1') },
  };
}

export async function tracingPhase(bench: BenchRun, sandbox: Sandbox): Promise<Figures['tracing']> {
  // A collector that takes every export and keeps nothing: the cost measured is the apps'.
  let exports = 0;
  const sink = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const byMode = modes(endpoint);
  try {
    const ingress: Partial<Record<Mode, number>> = {};
    for (const mode of Object.keys(byMode) as Mode[]) {
      bench.log(`ingress, one process, tracing ${mode}`);
      const { args, env } = byMode[mode];
      const server = await startIngress(bench, bench.options.redisUrl, 1, env, args);
      ingress[mode] = (await whileUp(measure(bench, server.url), server.child)).acceptedPerSecond;
      await server.child.stop();
    }
    // Each mode drains a fresh backlog of the same size: the same work for each, and never an
    // empty queue left by the modes before it.
    const worker: Partial<Record<Mode, number>> = {};
    for (const mode of Object.keys(byMode) as Mode[]) {
      await freshBacklog(bench, backlogSize(bench));
      bench.log(`worker draining ${backlogSize(bench)} webhooks, tracing ${mode}`);
      const { args, env } = byMode[mode];
      const drained = await whileUp(
        drainRate(
          bench,
          async () => [await startWorker(bench, sandbox, env, args)],
          undefined,
          bench.options.duration,
        ),
        sandbox.child,
      );
      await Promise.all(drained.workers.map((worker) => worker.stop()));
      worker[mode] = drained.perSecond;
    }
    return {
      ingress_plain_per_s: ingress.plain ?? 0,
      ingress_off_per_s: ingress.off ?? 0,
      ingress_full_per_s: ingress.full ?? 0,
      ingress_tenth_per_s: ingress.tenth ?? 0,
      worker_plain_per_s: worker.plain ?? 0,
      worker_off_per_s: worker.off ?? 0,
      worker_full_per_s: worker.full ?? 0,
      worker_tenth_per_s: worker.tenth ?? 0,
      exports_received: exports,
    };
  } finally {
    sink.close();
  }
}
