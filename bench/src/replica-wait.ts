// `npm run bench:replica-wait` (docs/operations.md#failover): what REDIS_WAIT_REPLICAS=1 costs the
// ingress. One built ingress process on a private Redis master with one replica, driven for
// `--duration` seconds at a time with and without the setting, in interleaved `--rounds`: accepted
// webhooks/s and ack latency p50/p99, medians over the rounds.
import { BenchRun } from './bench-run.js';
import { drive } from './load.js';
import { readOptions } from './options.js';
import { buildApps, startIngress, whileUp } from './processes.js';
import { median } from './results.js';

const options = readOptions();
const bench = new BenchRun(options);
bench.cleanUpOnSignals();

interface Figures {
  accepted_per_s: number;
  p50_ms: number;
  p99_ms: number;
}

async function run(): Promise<void> {
  buildApps(bench);
  const master = await bench.startPrivateRedis(false);
  const replica = await bench.startPrivateRedis(false, undefined, [
    '--replicaof',
    '127.0.0.1',
    String(master.port),
  ]);
  await replica.linkedToMaster();
  const rounds: Record<'0' | '1', Figures[]> = { '0': [], '1': [] };
  for (let round = 0; round < options.rounds; round++) {
    for (const replicas of ['0', '1'] as const) {
      const ingress = await startIngress(bench, master.url, 1, { REDIS_WAIT_REPLICAS: replicas });
      bench.pool.fill(Math.max(5000, options.duration * 3000));
      const load = await whileUp(
        drive(bench.pool, {
          url: ingress.url,
          connections: options.connections,
          durationSeconds: options.duration,
        }),
        ingress.child,
      );
      await ingress.child.stop();
      if (load.non2xx > 0 || load.errors > 0) {
        throw new Error(`REDIS_WAIT_REPLICAS=${replicas}: ${load.non2xx + load.errors} not 200`);
      }
      rounds[replicas].push({
        accepted_per_s: Math.round(load.acceptedPerSecond),
        p50_ms: load.p50Ms,
        p99_ms: load.p99Ms,
      });
      bench.log(`REDIS_WAIT_REPLICAS=${replicas}: ${JSON.stringify(rounds[replicas].at(-1))}`);
    }
  }
  const summary = (figures: Figures[]) => ({
    accepted_per_s: median(figures.map((f) => f.accepted_per_s)),
    p50_ms: median(figures.map((f) => f.p50_ms)),
    p99_ms: median(figures.map((f) => f.p99_ms)),
  });
  const without = summary(rounds['0']);
  const withWait = summary(rounds['1']);
  console.log(
    JSON.stringify(
      {
        without_wait: without,
        with_wait_1: withWait,
        accepted_with_vs_without:
          Math.round((withWait.accepted_per_s / without.accepted_per_s) * 100) / 100,
      },
      null,
      2,
    ),
  );
}

await bench.runToEnd(run);
