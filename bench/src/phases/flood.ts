// Legitimate ack latency, paced, on one ingress process (the rate limit is per process): alone,
// then while unsigned bodies of nearly MAX_BODY_BYTES, the two shapes in turn, arrive from another
// sender address at twice INGRESS_RATE_LIMIT (docs/performance.md). In
// between, each shape alone at the limit gives its CPU cost to the ingress, from /proc: other load
// on the machine barely moves that figure, where it moves latencies a lot.
import { setTimeout as delay } from 'node:timers/promises';
import type { BenchRun } from '../bench-run.js';
import { checkLocalAddress, longKeysBody, manyKeysBody } from '../flood-bodies.js';
import type { FloodBody } from '../flood-bodies.js';
import type { BenchOptions } from '../options.js';
import type { PacedResult } from '../paced.js';
import { startIngress, whileUp } from '../processes.js';
import type { FloodFigures } from '../results.js';
import { floodFigures } from './flood-figures.js';
import { FloodSenders } from './flood-senders.js';

export type FloodSettings = ReturnType<typeof floodSettings>;

/**
 * A legitimate sender paced at `legitRate` from 127.0.0.1 while unsigned bodies arrive from
 * 127.0.0.2 at twice the ingress's per-sender rate limit, which is twice the legitimate rate so
 * that only the flood meets it. 20/s per sender address is a generous limit for one partner's
 * webhooks; each unsigned body of the costliest shape costs about as much CPU as a legitimate
 * event of the same size, so the limit decides how much of a core one address can take.
 */
export function floodSettings({ quick, duration, warmupSeconds }: BenchOptions) {
  return {
    rateLimit: 20,
    offeredPerSecond: 40,
    connections: 20,
    address: '127.0.0.2',
    // The ingress's default MAX_BODY_BYTES, less a little: the bodies are read whole, never 413'd
    // for their size.
    bodyBytes: 262_144 - 100,
    legitRate: 10,
    legitConnections: 5,
    seconds: quick ? 2 : duration,
    warmupSeconds: quick ? 1 : warmupSeconds,
    /** Each shape alone at the rate limit, for its CPU cost. */
    shapeSeconds: quick ? 1 : 2,
    rampSeconds: quick ? 0.5 : 1,
    // A request not answered by then is given up (and counted as failed); it bounds the phase.
    requestTimeoutMs: quick ? 10_000 : 30_000,
  } as const;
}

/** The ingress's CPU time per request, in milliseconds, unrounded. */
export interface FloodCpuMs {
  legit: number;
  manyKeys: number;
  longKeys: number;
}

/** What the phase measured, before it is rounded into figures. */
export interface FloodMeasures {
  unloaded: PacedResult;
  loaded: PacedResult;
  flooded: PacedResult;
  shapes: readonly [FloodBody, FloodBody];
  cpuMs: FloodCpuMs;
}

export async function floodPhase(
  bench: BenchRun,
  settings: FloodSettings,
): Promise<{ figures: FloodFigures; cpuMs: FloodCpuMs }> {
  bench.log(
    `legitimate webhooks at ${settings.legitRate}/s, alone and under a flood of unsigned ` +
      `${settings.bodyBytes}-byte bodies from ${settings.address} at ${settings.offeredPerSecond}/s ` +
      `(INGRESS_RATE_LIMIT=${settings.rateLimit})`,
  );
  const measures = await floodLatency(bench, settings);
  return { figures: floodFigures(settings, measures), cpuMs: measures.cpuMs };
}

async function floodLatency(bench: BenchRun, settings: FloodSettings): Promise<FloodMeasures> {
  await checkLocalAddress(settings.address);
  const ingress = await startIngress(bench, bench.options.redisUrl, 1, {
    INGRESS_RATE_LIMIT: String(settings.rateLimit),
  });
  const shapes = [manyKeysBody(settings.bodyBytes), longKeysBody(settings.bodyBytes)] as const;
  const send = new FloodSenders(bench, settings, ingress);
  try {
    // Warm up (JIT, connections) just under the limit: it counts the legitimate sender too.
    await send.legitimate(settings.warmupSeconds, settings.rateLimit * 0.9);
    const alone = await send.cpuPerRequest(() => send.legitimate(settings.seconds));
    const shapeCpuMs: number[] = [];
    for (const shape of shapes) {
      const cost = await send.cpuPerRequest(() =>
        send.unsigned([shape], settings.rateLimit, settings.shapeSeconds),
      );
      shapeCpuMs.push(cost.cpuMs);
    }
    const { offeredPerSecond, rampSeconds, seconds } = settings;
    const flooding = send.unsigned(shapes, offeredPerSecond, rampSeconds + seconds + 60);
    await whileUp(delay(rampSeconds * 1000), ingress.child);
    const loaded = await send.legitimate(seconds);
    send.stopFlood();
    const flooded = await whileUp(flooding, ingress.child);
    bench.signal.throwIfAborted(); // figures of a cut-short run would mislead
    const cpuMs = { legit: alone.cpuMs, manyKeys: shapeCpuMs[0]!, longKeys: shapeCpuMs[1]! };
    return { unloaded: alone.result, loaded, flooded, shapes, cpuMs };
  } finally {
    send.stopFlood();
    await ingress.child.stop();
    await bench.clearKeys();
  }
}
