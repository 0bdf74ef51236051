// `npm run bench:redis-cost`'s command line, parsed once.
import { parseArgs } from 'node:util';
import type { BenchOptions } from '../options.js';

export interface RedisCostOptions {
  /** Webhooks of the bench's mix per round. @defaultValue 2000 */
  webhooks: number;
  /** Rounds measured (their medians are reported), besides the pass naming the scripts. @defaultValue 3 */
  rounds: number;
  /** `RECORD_TTL_SECONDS` of the ingress and the worker. @defaultValue 5 */
  recordTtlSeconds: number;
  /** Where the figures go as JSON. @defaultValue `bench/redis-cost.json` */
  out: string;
  /** The worker's concurrency, and the baseline's. @defaultValue WORKER_CONCURRENCY or 20 */
  concurrency: number;
  /** The load generator's connections, and the baseline's adds in flight. @defaultValue 50 */
  connections: number;
  /**
   * Webhooks/s offered to the intake, and the same rate in actions to the baseline's add; 0: each
   * as fast as it goes. @defaultValue 1000, a rate the machine carries with cores to spare
   */
  intakeRate: number;
}

const USAGE =
  'usage: npm run bench:redis-cost -- [--webhooks N] [--rounds N] [--ttl S] [--concurrency N] [--connections N] [--intake-rate R] [--out FILE]';

export function readRedisCostOptions(): RedisCostOptions {
  const { values: args } = parseArgs({
    options: {
      webhooks: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '3' },
      ttl: { type: 'string', default: '5' },
      out: { type: 'string', default: 'bench/redis-cost.json' },
      concurrency: { type: 'string', default: process.env.WORKER_CONCURRENCY || '20' },
      connections: { type: 'string', default: '50' },
      'intake-rate': { type: 'string', default: '1000' },
    },
  });
  const options: RedisCostOptions = {
    webhooks: Number(args.webhooks),
    rounds: Number(args.rounds),
    recordTtlSeconds: Number(args.ttl),
    out: args.out,
    concurrency: Number(args.concurrency),
    connections: Number(args.connections),
    intakeRate: Number(args['intake-rate']),
  };
  const counts = [options.webhooks, options.rounds, options.recordTtlSeconds];
  if (
    ![...counts, options.concurrency, options.connections].every(
      (n) => Number.isInteger(n) && n > 0,
    )
  ) {
    console.error(USAGE);
    process.exit(2);
  }
  if (!(Number.isInteger(options.intakeRate) && options.intakeRate >= 0)) {
    console.error(USAGE);
    process.exit(2);
  }
  return Object.freeze(options);
}

/** The bench's options for the phases this run shares with it, on the Redis at `redisUrl`. */
export function benchOptionsFor(options: RedisCostOptions, redisUrl: string): BenchOptions {
  return Object.freeze({
    duration: 60,
    warmupSeconds: 0,
    connections: options.connections,
    concurrency: options.concurrency,
    quick: false,
    rounds: options.rounds,
    redisRounds: options.rounds,
    rate: options.intakeRate || undefined,
    out: options.out,
    redisUrl,
    cluster: undefined,
  });
}
