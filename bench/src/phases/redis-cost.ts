// Redis's own cost, measured as `npm run bench:redis-cost` measures it (docs/redis-cost.md), on a
// private redis-server: its CPU per action on the system's path and on the raw BullMQ baseline's,
// and the bytes a finished webhook leaves. The shared Redis of the other phases serves other
// clients too, so its CPU time would not be the system's alone.
import { freePort } from '@pw/test-utils';
import type { BenchRun } from '../bench-run.js';
import type { Sandbox } from '../processes.js';
import { redisFiguresOf } from '../redis-cost/figures.js';
import type { RedisFigures } from '../redis-cost/figures.js';
import { benchOptionsFor } from '../redis-cost/options.js';
import { measureRounds, privateStage } from '../redis-cost/stage.js';

/** Webhooks per round (a tenth with --quick), at the rate bench:redis-cost offers by default. */
const WEBHOOKS = 2000;
const INTAKE_RATE = 1000;
const RECORD_TTL_SECONDS = 5;

/** Each round's Redis figures. */
export async function redisCostPhase(bench: BenchRun, sandbox: Sandbox): Promise<RedisFigures[]> {
  const { quick, redisRounds: rounds, concurrency, connections } = bench.options;
  const webhooks = quick ? WEBHOOKS / 10 : WEBHOOKS;
  bench.log(`Redis's cost: ${rounds} rounds of ${webhooks} webhooks on a private Redis`);
  const port = await freePort();
  const options = {
    webhooks,
    rounds,
    recordTtlSeconds: RECORD_TTL_SECONDS,
    out: bench.options.out,
    concurrency,
    connections,
    intakeRate: INTAKE_RATE,
  };
  const run = bench.derive(benchOptionsFor(options, `redis://127.0.0.1:${port}`));
  const onStage = await privateStage(run, port, sandbox, RECORD_TTL_SECONDS);
  try {
    const measured = await measureRounds(onStage, webhooks, rounds);
    return measured.map((round) => redisFiguresOf(round.costs, round.memory));
  } finally {
    await onStage.close();
    await run.cleanup();
    bench.workerStarts += run.workerStarts;
    bench.ownTokenRequests += run.ownTokenRequests;
  }
}
