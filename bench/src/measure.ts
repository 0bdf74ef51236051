import { drive } from './load.js';
import type { LoadResult } from './load.js';
import type { BenchRun } from './bench-run.js';

export interface MeasureOptions {
  /** Webhooks per second offered; none: as fast as the target answers. */
  rate?: number;
  /** @defaultValue true */
  warmup?: boolean;
  /** Keep when each webhook's ack arrived. */
  recordAcks?: boolean;
  /** Send the same events over and over (the echo does not deduplicate). */
  repeat?: boolean;
}

/**
 * Drives `url` for the phase, with fresh events: without `rate`, first a warm-up (JIT,
 * connections) whose pace also sizes the pool; with `rate`, a pool for that rate and no warm-up
 * (the target is warm already, and a warm-up at full speed would leave a backlog for the worker).
 * `repeat` (the echo) sends the same pool's events over and over.
 */
export async function measure(
  bench: BenchRun,
  url: string,
  options: MeasureOptions = {},
): Promise<LoadResult> {
  const { pool } = bench;
  const { connections, duration, warmupSeconds } = bench.options;
  const repeat = options.repeat ?? false;
  let expectedRate = options.rate ?? 5000;
  if (options.warmup !== false && warmupSeconds > 0) {
    pool.fill(repeat ? 1000 : warmupSeconds * 3000);
    const warm = await drive(pool, { url, connections, durationSeconds: warmupSeconds, repeat });
    if (options.rate === undefined) expectedRate = Math.max(2000, warm.acceptedPerSecond * 2);
  }
  if (repeat) {
    pool.fill(1000);
    return drive(pool, { url, connections, durationSeconds: duration, repeat });
  }
  pool.fill(Math.ceil(duration * expectedRate * 1.05) + connections);
  const ranDry = pool.ranDry;
  const result = await drive(pool, {
    url,
    connections,
    durationSeconds: duration,
    rate: options.rate,
    recordAcks: options.recordAcks,
  });
  if (pool.ranDry > ranDry) bench.log(`(${pool.ranDry - ranDry} events signed during the run)`);
  return result;
}
