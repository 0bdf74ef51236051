// `npm run bench:round-trips` (docs/redis-cost.md): what one call costs Redis's CPU when it comes
// alone, as the worker's calls come, against the same calls pipelined. A plain `HSET`, a script
// that does nothing, and the worker's record change (`outcome-change-3.lua`) as an action's
// completion sends it, on a private `redis-server` with no other client.
import { parseArgs } from 'node:util';
import { cpus } from 'node:os';
import { Redis } from 'ioredis';
import { OUTCOME_CHANGE_COMMAND, attemptOf, outcomeChangeCall, withCommand } from '@pw/shared/lua';
import { isoNow } from '@pw/shared/outcomes';
import { keys } from '@pw/shared/queue';
import type { OutcomeChangeCommand } from '@pw/shared/lua';
import { PrivateRedis } from '@pw/test-utils';
import { median } from './results.js';
import { redisCpuMs } from './redis-info.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
if (!(Number.isInteger(CALLS) && CALLS > 0 && Number.isInteger(ROUNDS) && ROUNDS > 0)) {
  console.error('usage: npm run bench:round-trips -- [--calls 10000] [--rounds 3]');
  process.exit(2);
}
/** Calls per pipeline in the pipelined runs. */
const PIPELINE = 100;
const ACTIONS = ['lock_price', 'notify_customer', 'update_crm'];
const settings = { queuePrefix: 'rt', recordTtlSeconds: 5 };

type Client = Redis & OutcomeChangeCommand & { pwNothing(id: string): Promise<number> };
type Call = (redis: Client, i: number) => Promise<unknown>;

/** The calls measured: each sent `CALLS` times, to `CALLS` webhooks' records. */
const CASES: [name: string, call: Call][] = [
  ['HSET of one field', (redis, i) => redis.hset(keys.outcome('rt', `wh_${i}`), 'x', '1')],
  ['EVALSHA of a script that does nothing', (redis, i) => redis.pwNothing(`wh_${i}`)],
  [
    'outcome-change-3.lua, an action completed',
    (redis, i) => {
      const { keys, args } = outcomeChangeCall(
        settings,
        `wh_${i}`,
        'lock_price',
        { state: 'completed', completed_at: isoNow() },
        {
          remove: ['last_error', 'held'],
          attempt: attemptOf('completed', { started_at: isoNow(), status: 200, duration_ms: 12 }),
          count: 'completed',
          countAttempt: true,
        },
      );
      // A change refused (its record gone) would measure nothing worth knowing.
      return redis.pwOutcomeChange(...keys, ...args).then((changed) => {
        if (changed !== 1) throw new Error(`the record change of wh_${i} was refused`);
      });
    },
  ],
];

/** A record as the intake leaves it: three actions waiting. */
async function records(redis: Redis): Promise<void> {
  await redis.flushall();
  for (let start = 0; start < CALLS; start += PIPELINE) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(CALLS, start + PIPELINE); i++) {
      const key = keys.outcome('rt', `wh_${i}`);
      pipeline.hset(key, {
        webhook_id: `wh_${i}`,
        event_type: 'quote.status_changed',
        entity_id: `Q-${i}`,
        received_at: isoNow(),
        actions: JSON.stringify(ACTIONS),
        ...Object.fromEntries(ACTIONS.map((name) => [`${name}:state`, 'waiting'])),
      });
      pipeline.expire(key, 3600);
    }
    await pipeline.exec();
  }
}

/** Redis's CPU µs per call of `call`: one at a time, or `PIPELINE` at a time. */
async function cost(redis: Client, call: Call, pipelined: boolean) {
  await records(redis);
  const before = await redisCpuMs(redis);
  if (pipelined) {
    for (let start = 0; start < CALLS; start += PIPELINE) {
      const batch: Promise<unknown>[] = [];
      for (let i = start; i < Math.min(CALLS, start + PIPELINE); i++) batch.push(call(redis, i));
      await Promise.all(batch);
    }
  } else {
    for (let i = 0; i < CALLS; i++) await call(redis, i);
  }
  return ((await redisCpuMs(redis)) - before) * (1000 / CALLS);
}

function client(url: string, autoPipelining: boolean): Client {
  const redis = new Redis(url, { enableAutoPipelining: autoPipelining });
  withCommand<OutcomeChangeCommand>(redis, OUTCOME_CHANGE_COMMAND);
  redis.defineCommand('pwNothing', { numberOfKeys: 0, lua: 'return 1' });
  return redis as Client;
}

const server = await PrivateRedis.start();
const alone = client(server.url, false);
// Commands sent in one tick go out in one write: the pipelined runs.
const batched = client(server.url, true);
try {
  const rows: string[] = [];
  for (const [name, call] of CASES) {
    const figures = { alone: [] as number[], pipelined: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      figures.alone.push(await cost(alone, call, false));
      figures.pipelined.push(await cost(batched, call, true));
    }
    const one = median(figures.alone);
    const many = median(figures.pipelined);
    rows.push(`| ${name} | ${one.toFixed(1)} | ${many.toFixed(1)} | ${(one - many).toFixed(1)} |`);
  }
  const cpu = cpus()[0]?.model ?? 'unknown';
  console.log(`${cpu}, ${cpus().length} cores; ${CALLS} calls per run, median of ${ROUNDS} runs\n`);
  console.log('| call | Redis CPU µs, one at a time | pipelined 100 at a time | the round trip |');
  console.log('| --- | ---: | ---: | ---: |');
  console.log(rows.join('\n'));
} finally {
  alone.disconnect();
  batched.disconnect();
  await server.destroy();
}
