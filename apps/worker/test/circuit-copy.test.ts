import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompletedEntry } from '@pw/shared/records';
import { PrivateRedis, RedisMonitor } from '@pw/test-utils';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';
import type { WorkerHarness } from './harness.js';

// The worker's copy of the circuits, against a Redis of the test's own that MONITOR watches: a
// success on a closed and clean circuit writes nothing to the shared keys; a failure brings the
// circuit's commands back until the target answers again.

/** Commands that only read. */
const READS = new Set(['hmget', 'hget', 'hgetall', 'zcard', 'zrange', 'zscore', 'smembers']);

let server: PrivateRedis;
let h: WorkerHarness;
let shared: string;

interface Seen {
  /** `lua` for a command a script ran, else the client's address. */
  source: string;
  args: string[];
}

/** Every command Redis runs while `during` does, as MONITOR reports it. */
async function watch(during: () => Promise<void>): Promise<Seen[]> {
  const seen = await RedisMonitor.during(server.url, during);
  return seen.map(({ source, args }) => ({ source, args }));
}

/** The commands that wrote under the shared prefix (or published on its channels). */
const sharedWrites = (seen: Seen[]) =>
  seen.filter(
    ({ args: [command, ...rest] }) =>
      !READS.has(command!.toLowerCase()) && rest.some((arg) => arg.startsWith(`${shared}:`)),
  );

const drain = async (count: number) => {
  const jobs = Array.from({ length: count }, () => webhookJob('quote', 'approved'));
  for (const job of jobs) await h.enqueue(job);
  for (const job of jobs) expect((await h.finished(job.webhook_id)).state).toBe('completed');
};

beforeAll(async () => {
  server = await PrivateRedis.start();
  h = await startWorkerHarness({
    redisUrl: server.url,
    partitions: 2,
    circuit: { failureThreshold: 10, probeIntervalMs: 200 },
  });
  shared = h.partitions.shared;
});
afterAll(async () => {
  await h.close();
  await server.stop();
});

describe("the worker's copy of the circuits", { timeout: 60_000 }, () => {
  it('a success on a clean circuit writes nothing shared; after a failure the circuit is asked again', async () => {
    const target = circuitTarget(h.target);
    // A target never answered is suspect: its first answer is reported, then the copy hears it.
    await drain(1);
    await expect.poll(() => h.worker.circuitCopy.clean(target)).toBe(true);

    const clean = await watch(() => drain(10));
    expect(sharedWrites(clean)).toEqual([]);
    // MONITOR did see the tries: their starts in the partitions.
    const starts = clean.filter(({ args }) => args.some((arg) => arg.includes('}:outcome:')));
    expect(starts.length).toBeGreaterThanOrEqual(30);

    const afterFailure = await watch(async () => {
      h.sandbox.api.failNext({ path: /.*/, status: 503, times: 1 });
      await drain(1);
    });
    const circuitKey = `${shared}:circuit:${target}`;
    const ran = (command: string, key: string) =>
      afterFailure.some(
        ({ source, args }) => source === 'lua' && args[0] === command && args[1] === key,
      );
    // The failure counted, the circuit announced as suspect, the retry admitted by the circuit.
    expect(ran('HINCRBY', circuitKey)).toBe(true);
    expect(ran('PUBLISH', `${shared}:circuit-changed`)).toBe(true);
    expect(ran('ZADD', `${circuitKey}:in-flight`)).toBe(true);
    await expect.poll(() => h.worker.circuitCopy.clean(target)).toBe(true);
  });

  it('an action that completes on its first call: its end in its record, counting the call, one stream entry, no snapshot', async () => {
    await expect.poll(() => h.worker.circuitCopy.clean(circuitTarget(h.target))).toBe(true);
    const jobs = Array.from({ length: 5 }, () => webhookJob('quote', 'approved'));
    const read = new Map<string, string | null>();
    const seen = await watch(async () => {
      for (const job of jobs) await h.enqueue(job);
      // Read off the hot record: no recorder runs here.
      for (const job of jobs) {
        const outcome = await h.finished(job.webhook_id);
        expect(outcome.state).toBe('completed');
        expect(outcome.actions.map((action) => action.attempts)).toEqual(job.actions.map(() => 1));
        for (const action of outcome.actions) {
          read.set(`${job.webhook_id}.${action.name}`, action.completed_at);
        }
      }
    });
    const entries = (kind: string) =>
      seen.filter(
        ({ args }) =>
          args[0]?.toLowerCase() === 'xadd' &&
          args[1]?.endsWith(':records') &&
          args[args.indexOf('k') + 1] === kind,
      );
    const actions = jobs.flatMap((job) => job.actions).length;
    expect(entries('completed')).toHaveLength(actions);
    // The record's completion and its stream entry say the same.
    for (const { args } of entries('completed')) {
      const entry = JSON.parse(args.at(-1) ?? '{}') as CompletedEntry;
      expect(read.get(`${entry.webhook_id}.${entry.action}`)).toBe(entry.finished_at);
      expect(entry.attempt).toBe(1);
    }
    expect(entries('outcome')).toEqual([]);
    const stateWrites = (state: string) =>
      seen.filter(
        ({ args: [command, key, ...rest] }) =>
          command!.toLowerCase() === 'hset' && key?.includes('}:outcome:') && rest.includes(state),
      );
    // Written once, by the worker, at the call's end; nothing before the call.
    expect(stateWrites('active')).toHaveLength(0);
    expect(stateWrites('completed')).toHaveLength(actions);
  });
});

describe("the entity's turn on the common path", { timeout: 60_000 }, () => {
  it("a state-changing action's first call: the entity's turn taken in the out-of-order check's command, given back once, with the call's end", async () => {
    // Its first answer makes the target clean (a target never answered is suspect).
    await drain(1);
    await expect.poll(() => h.worker.circuitCopy.clean(circuitTarget(h.target))).toBe(true);
    const job = webhookJob('quote', 'approved');
    const turned = ['update_sales_opportunity', 'lock_price'];
    expect(job.actions).toEqual(expect.arrayContaining(turned));
    const seen = await watch(async () => {
      await h.enqueue(job);
      expect((await h.finished(job.webhook_id)).state).toBe('completed');
    });
    const fromClient = seen.filter(({ source }) => source !== 'lua');
    const newest = fromClient.filter(({ args }) => args.some((arg) => arg.includes(':latest:')));
    // The ingress's intake writes the entity's newest time; the worker never reads it on its own.
    expect(newest.filter(({ args }) => args[0]?.toLowerCase() !== 'evalsha')).toEqual([]);
    const checked = seen.filter(
      ({ source, args }) => source === 'lua' && args[0] === 'GET' && args[1]?.includes(':latest:'),
    );
    // Read by the two takes' scripts (the stale check), and by the intake's.
    expect(checked.length).toBeGreaterThanOrEqual(turned.length);
    for (const action of turned) {
      const turnKey = `:turn:${job.event_type}:${job.entity_id}:${action}`;
      const turnCalls = fromClient.flatMap(({ args }) =>
        args[0]?.toLowerCase() === 'evalsha' && args.some((arg) => arg.endsWith(turnKey))
          ? [args.find((arg) => arg === 'take' || arg === 'give')]
          : [],
      );
      // One take, the check in its script, and one give.
      expect(turnCalls).toEqual(['take', 'give']);
      // And it gave the turn back.
      expect(
        seen.some(
          ({ source, args }) => source === 'lua' && args[0] === 'DEL' && args[1]?.endsWith(turnKey),
        ),
      ).toBe(true);
    }
  });
});
