// The record stream's promise, as a property over generated histories: whatever changes a
// webhook's actions go through (first calls that complete at once, failures and retries, holds,
// waits for a turn, stale skips) and whichever of two recorders takes each change, one of them
// dying with what it took, the store ends with the webhook as its hot record has it, and nothing
// is set aside. Real Redis, real PostgreSQL, the worker's own record writes, real recorders.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { RECORDER_GROUP, RejectedChanges } from '@pw/records';
import { noCall } from '@pw/shared/outcomes';
import type { OutcomeStore } from '@pw/shared/outcomes';
import { Partitions } from '@pw/shared/queue';
import { recordStreamKey } from '@pw/shared/records';
import { Recorder } from '../src/recorder.js';
import { drained, job, log, recorderHarness, schemaStore } from './harness.js';

const harness = recorderHarness();

/** What befalls one try of an action: the first of them counted at its end, the others at start. */
type Try = 'completed' | 'retrying' | 'held' | 'turn' | 'stale';
const CONSUMERS = ['a', 'b', 'dead'] as const;

const ACTIONS = ['notify_customer', 'lock_price', 'update_sales_opportunity'] as const;

/** One action's tries, as the worker writes them; the last one ends it. */
async function runAction(outcomes: OutcomeStore, id: string, action: string, tries: Try[]) {
  const timing = { started_at: new Date().toISOString(), status: 200, duration_ms: 3 };
  let calls = 0;
  for (const [index, step] of [...tries, 'completed' as const].entries()) {
    const last = index === tries.length;
    if (step === 'turn') await outcomes.waitingTurn(id, action);
    else if (step === 'held') await outcomes.held(id, action);
    else if (step === 'stale') return outcomes.skipped(id, action, 'stale');
    else {
      // A first call is counted at its end; a later one at its start.
      const first = calls === 0;
      const attempt = first ? 1 : await outcomes.started(id, action);
      calls += 1;
      if (last || step === 'completed')
        return outcomes.completed(id, action, timing, attempt, first);
      await outcomes.failed(id, action, 'retrying', 'http_503', noCall(), first);
    }
  }
}

/** Each entry of the stream taken, in order, by the consumer named for it. */
async function takeAs(owners: string[], run: number): Promise<void> {
  const stream = recordStreamKey(harness.prefix);
  for (const owner of owners) {
    await harness.redis.xreadgroup(
      'GROUP',
      RECORDER_GROUP,
      `${owner}-${run}`,
      'COUNT',
      1,
      'STREAMS',
      stream,
      '>',
    );
  }
}

test('whatever the changes and whichever recorder takes each, one dying, the store ends as the hot record', async () => {
  const { store } = await schemaStore(harness);
  const stream = recordStreamKey(harness.prefix);
  await harness.redis.xgroup('CREATE', stream, RECORDER_GROUP, '0', 'MKSTREAM');
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.array(fc.constantFrom<Try>('completed', 'retrying', 'held', 'turn', 'stale'), {
          maxLength: 3,
        }),
        { minLength: 1, maxLength: 3 },
      ),
      fc.array(fc.constantFrom(...CONSUMERS), { minLength: 12, maxLength: 12 }),
      async (actionTries, owners) => {
        run += 1;
        const rejected = new RejectedChanges(harness.redis, harness.prefix);
        const setAsideBefore = await rejected.count();
        const accepted = job(ACTIONS.slice(0, actionTries.length));
        await harness.intake.add(accepted);
        for (const [i, tries] of actionTries.entries()) {
          await runAction(harness.outcomes, accepted.webhook_id, ACTIONS[i]!, tries);
        }
        const entries = await harness.redis.xlen(stream);
        await takeAs(owners.slice(0, entries), run);
        // The two live recorders, the dead one's changes taken over once idle.
        const connections = ['a', 'b'].map(() => harness.redis.duplicate());
        const recorders = ['a', 'b'].map(
          (name, i) =>
            new Recorder(
              connections[i]!,
              store,
              {
                partitions: new Partitions(harness.prefix),
                consumer: `${name}-${run}`,
                retentionDays: 90,
                recordTtlSeconds: 600,
                blockMs: 50,
                claimIdleMs: 200,
              },
              log,
            ),
        );
        await Promise.all(recorders.map((recorder) => recorder.start()));
        try {
          await drained(harness, 30_000);
        } finally {
          await Promise.all(recorders.map((recorder) => recorder.stop()));
          for (const connection of connections) connection.disconnect();
        }
        const hot = await harness.outcomes.get(accepted.webhook_id);
        const stored = await store.webhook(accepted.webhook_id);
        const view = (actions: { name: string; state: string; attempts: number }[] = []) =>
          actions
            .map(({ name, state, attempts }) => ({ name, state, attempts }))
            .sort((x, y) => x.name.localeCompare(y.name));
        expect(stored?.state).toBe(hot?.state);
        expect(view(stored?.actions)).toEqual(view(hot?.actions));
        expect(await rejected.count()).toBe(setAsideBefore);
      },
    ),
    { numRuns: 15 },
  );
}, 300_000);
