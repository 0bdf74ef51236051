// What one bench run shares between its phases: options, key prefix, event pool, log, and every
// process and Redis server it starts, so that they are stopped and deleted however the run ends.
import { cpus } from 'node:os';
import { Redis } from 'ioredis';
import { deleteKeys, PrivateRedis, PrivateRedisCluster } from '@pw/test-utils';
import type { ChildRun } from '@pw/test-utils';
import { EventPool } from './load.js';
import type { BenchOptions } from './options.js';

export class BenchRun {
  readonly secret = 'bench-secret';
  /** Every key of the run is under it, in every Redis the run uses. */
  readonly prefix = `pwbench-${Math.random().toString(36).slice(2, 10)}`;
  readonly pool = new EventPool(this.secret);
  readonly cores = cpus().length;
  /** Worker processes started so far: each has a token manager of its own. */
  workerStarts = 0;
  /** Tokens the bench asked the sandbox for itself (the raw HTTP worker's, one per round). */
  ownTokenRequests = 0;
  private readonly began = performance.now();
  private readonly children: ChildRun[] = [];
  private readonly privateRedis: PrivateRedis[] = [];
  private readonly clusters: PrivateRedisCluster[] = [];
  private readonly derived: BenchRun[] = [];
  private readonly redisUsed: Set<string>;
  private cleaning: Promise<void> | undefined;
  /** Aborted when the run is interrupted: the in-process BullMQ loops stop adding jobs. */
  private readonly interrupted = new AbortController();

  constructor(
    readonly options: BenchOptions,
    from?: BenchRun,
  ) {
    this.redisUsed = new Set([options.redisUrl]);
    if (from) {
      this.began = from.began;
      this.interrupted = from.interrupted;
    }
  }

  get signal(): AbortSignal {
    return this.interrupted.signal;
  }

  /** A line of progress on stderr, with the time since the run began. */
  readonly log = (line: string): void => {
    const seconds = ((performance.now() - this.began) / 1000).toFixed(1).padStart(5);
    console.error(`bench: ${seconds} s  ${line}`);
  };

  /**
   * A run on other options (another Redis, another rate) whose processes and Redis servers are
   * stopped and deleted with this run's, and its loops with this run's.
   */
  derive(options: BenchOptions): BenchRun {
    const run = new BenchRun(options, this);
    this.derived.push(run);
    return run;
  }

  /** Keeps `child` to be stopped at the end; once clean-up has begun, stops it and gives up. */
  track(child: ChildRun): ChildRun {
    this.children.push(child);
    if (this.cleaning) {
      void child.stop();
      throw new Error('the bench is stopping');
    }
    return child;
  }

  /** A `redis-server` of the run's own; `port`: its port (default: a free one). */
  async startPrivateRedis(
    appendOnly: boolean,
    port?: number,
    args: readonly string[] = [],
  ): Promise<PrivateRedis> {
    const redis = await PrivateRedis.start({
      appendOnly,
      args,
      ...(port === undefined ? {} : { port }),
    });
    this.privateRedis.push(redis);
    if (this.cleaning) {
      await redis.destroy();
      throw new Error('the bench is stopping');
    }
    this.redisUsed.add(redis.url);
    return redis;
  }

  /** A Redis Cluster of `masters` `redis-server` processes of the run's own (no replicas). */
  async startPrivateCluster(masters: number): Promise<PrivateRedisCluster> {
    const cluster = await PrivateRedisCluster.start(masters);
    this.clusters.push(cluster);
    if (this.cleaning) {
      await cluster.destroy();
      throw new Error('the bench is stopping');
    }
    return cluster;
  }

  /** Deletes the run's keys from the Redis at `url`. */
  async clearKeys(url = this.options.redisUrl): Promise<void> {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      await deleteKeys(redis, this.prefix);
    } finally {
      redis.disconnect();
    }
  }

  /** Stops every process, deletes the run's keys and the private Redis servers; once. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      // A phase may still start a process while the others stop: stop until none is left running.
      for (let stopped = 0; stopped < this.children.length;) {
        const batch = this.children.slice(stopped);
        stopped = this.children.length;
        await Promise.all(batch.map((child) => child.stop()));
      }
      for (const run of this.derived) await run.cleanup();
      for (const url of this.redisUsed) await this.clearKeys(url).catch(() => undefined);
      await Promise.all(this.privateRedis.map((redis) => redis.destroy()));
      await Promise.all(this.clusters.map((cluster) => cluster.destroy()));
    })();
    return this.cleaning;
  }

  /**
   * Runs `main`, then stops every process and exits, 1 if `main` threw. It does not wait for the
   * event loop: a phase cut short by a failure may leave a load generator or a timer behind.
   */
  async runToEnd(main: () => Promise<void>): Promise<never> {
    try {
      await main();
    } catch (error) {
      console.error(error);
      process.exitCode = 1;
    } finally {
      await this.cleanup();
    }
    process.exit();
  }

  /** On SIGINT or SIGTERM: stops the phases' loops, cleans up, exits 130 or 143. */
  cleanUpOnSignals(): void {
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      // `on`, not `once`: Ctrl-C reaches the bench twice (from the terminal and relayed by npm and
      // tsx), and a second signal without a handler would kill it half-way through its clean-up.
      process.on(signal, () => {
        if (this.cleaning) return;
        this.interrupted.abort();
        this.log(`${signal}: stopping the processes and deleting the run's keys`);
        void this.cleanup().finally(() => process.exit(code));
      });
    }
  }
}
