// The bench's command line (and the two environment variables it reads), parsed once.
import { parseArgs } from 'node:util';

export interface BenchOptions {
  /** Seconds each phase drives its target (1 with --quick). @defaultValue 10 */
  duration: number;
  /** Seconds of warm-up before a phase that has one (none with --quick). @defaultValue 2 */
  warmupSeconds: number;
  /** The load generator's connections. @defaultValue 50 */
  connections: number;
  /** The worker's concurrency, and the raw no-op worker's. @defaultValue WORKER_CONCURRENCY or 20 */
  concurrency: number;
  /** A short run that only checks every phase works: its figures are not to be compared. */
  quick: boolean;
  /**
   * Rounds of the compared phases (echo, raw baselines, ingress, worker), interleaved; each ratio
   * is reported as its median and range over them. @defaultValue 3 (1 with --quick)
   */
  rounds: number;
  /**
   * Rounds of the Redis's cost phase, whose ratio moves by about 0.1 from one round to the next on
   * a shared machine. @defaultValue 7 (1 with --quick)
   */
  redisRounds: number;
  /**
   * Webhooks/s offered in the latency phase. @defaultValue half the rate the worker drained in
   * this run (its median over the rounds), in webhooks
   */
  rate: number | undefined;
  /** Where the results go as JSON. @defaultValue `bench/results.json` */
  out: string;
  /** The Redis of the main run. @defaultValue REDIS_URL or `redis://127.0.0.1:6379` */
  redisUrl: string;
  /**
   * Masters of a Redis Cluster to run the cluster phase on, instead of the other phases (results
   * in `bench/results-cluster.json`). @defaultValue none
   */
  cluster: number | undefined;
}

const USAGE =
  'usage: npm run bench -- [--duration S] [--connections N] [--concurrency N] [--rounds N] [--redis-rounds N] [--rate R] [--quick] [--cluster K] [--out FILE]';

/** The options from `process.argv`; prints the usage and exits 2 if a number is not one. */
export function readOptions(): BenchOptions {
  const { values: args } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      concurrency: { type: 'string', default: process.env.WORKER_CONCURRENCY || '20' },
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      'redis-rounds': { type: 'string' },
      rate: { type: 'string' },
      out: { type: 'string' },
      cluster: { type: 'string' },
    },
  });
  const quick = args.quick;
  const options: BenchOptions = {
    duration: quick ? 1 : Number(args.duration),
    warmupSeconds: quick ? 0 : 2,
    connections: Number(args.connections),
    concurrency: Number(args.concurrency),
    quick,
    rounds: Number(args.rounds ?? (quick ? 1 : 3)),
    redisRounds: Number(args['redis-rounds'] ?? (quick ? 1 : 7)),
    rate: args.rate === undefined ? undefined : Number(args.rate),
    out: args.out ?? (args.cluster ? 'bench/results-cluster.json' : 'bench/results.json'),
    cluster: args.cluster === undefined ? undefined : Number(args.cluster),
    redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  };
  const counts = [
    options.duration,
    options.connections,
    options.concurrency,
    options.rounds,
    options.redisRounds,
  ];
  if (options.rate !== undefined) counts.push(options.rate);
  if (options.cluster !== undefined) counts.push(options.cluster);
  if (!counts.every((n) => Number.isInteger(n) && n > 0)) {
    console.error(USAGE);
    process.exit(2);
  }
  return Object.freeze(options);
}
