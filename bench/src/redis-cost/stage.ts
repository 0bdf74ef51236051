// The stage every measured round plays on: a private redis-server of the run's own, the
// measurer's connection, a record store for the recorder; and the rounds measured on it, which
// `npm run bench:redis-cost` and `npm run bench` (its Redis figures) share.
import { Redis } from 'ioredis';
import type { BenchRun } from '../bench-run.js';
import type { Sandbox } from '../processes.js';
import { benchDatabase } from '../record-store.js';
import { roundCosts } from './figures.js';
import type { Part, PartCost } from './figures.js';
import { RedisMeter } from './meter.js';
import { measureRound } from './round.js';
import type { RoundMemory } from './round.js';
import type { Stage } from './windows.js';

/** One measured round: each part's cost per action, what the webhooks left, the action jobs. */
export interface MeasuredRound {
  costs: Record<Part, PartCost>;
  memory: RoundMemory;
  actions: number;
}

export interface PrivateStage {
  stage: Stage;
  databaseUrl: string;
  close(): Promise<void>;
}

/**
 * A private redis-server (no RDB or AOF) on `port`, which `bench.options.redisUrl` names, and a
 * record store; the sandbox is the caller's.
 */
export async function privateStage(
  bench: BenchRun,
  port: number,
  sandbox: Sandbox,
  recordTtlSeconds: number,
): Promise<PrivateStage> {
  await bench.startPrivateRedis(false, port);
  const redis = new Redis(bench.options.redisUrl);
  const meter = new RedisMeter(redis, () => redis.call('SLOWLOG', 'RESET'));
  bench.log(`private redis-server on port ${port}; keys under ${bench.prefix}:`);
  const database = await benchDatabase(bench);
  return {
    stage: { bench, sandbox, meter, redis, recordTtlSeconds },
    databaseUrl: database.url,
    async close() {
      redis.disconnect();
      await database.close();
    },
  };
}

/** `rounds` rounds of `webhooks` webhooks each. */
export async function measureRounds(
  { stage, databaseUrl }: PrivateStage,
  webhooks: number,
  rounds: number,
): Promise<MeasuredRound[]> {
  const measured: MeasuredRound[] = [];
  for (let i = 1; i <= rounds; i++) {
    stage.bench.log(`Redis's cost, round ${i} of ${rounds}`);
    const { cost, memory } = await measureRound(stage, webhooks, databaseUrl);
    measured.push({ costs: roundCosts(cost), memory, actions: cost.actions });
  }
  return measured;
}
