// Changes of one webhook that reach the store out of order, because two recorders took them: an
// action's completion, which needs the webhook's row, read by one recorder while another holds
// the webhook's own change (and dies; its changes are taken over once idle). The completion waits
// for it, pending, and is written after it: never set aside, never lost.
import { setTimeout } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { RECORDER_GROUP, RejectedChanges } from '@pw/records';
import { recordStreamKey } from '@pw/shared/records';
import { drained, job, recorderHarness, schemaStore, startRecorder } from './harness.js';

const harness = recorderHarness();

for (const backlog of [false, true]) {
  const named = backlog ? ', even from a backlog older than the wait (the store was away)' : '';
  test(`an action's completion read before its webhook's own change (held by a recorder that died) waits for it, and the store ends completed${named}`, async () => {
    const { store } = await schemaStore(harness);
    const stream = recordStreamKey(harness.prefix);
    await harness.redis.xgroup('CREATE', stream, RECORDER_GROUP, '0', 'MKSTREAM');

    // The ingress takes the webhook in, and the worker completes its action.
    const accepted = job(['notify_customer']);
    await harness.intake.add(accepted);
    const attempts = await harness.outcomes.started(accepted.webhook_id, 'notify_customer');
    const timing = { started_at: accepted.received_at, status: 200, duration_ms: 1 };
    await harness.outcomes.completed(accepted.webhook_id, 'notify_customer', timing, attempts);
    // A backlog: both changes older than the live recorder's wait by the time it reads them.
    const webhookWaitMs = 5000;
    if (backlog) await setTimeout(webhookWaitMs + 200);

    // A recorder reads the webhook's change, then dies before writing it.
    const taken = (await harness.redis.xreadgroup(
      'GROUP',
      RECORDER_GROUP,
      'recorder-that-died',
      'COUNT',
      1,
      'STREAMS',
      stream,
      '>',
    )) as [string, [string, string[]][]][];
    expect(taken[0]?.[1]).toHaveLength(1);

    // The live recorder reads the completion first; the dead one's change is taken over once idle.
    await startRecorder(harness, store, { consumer: 'live', claimIdleMs: 1000, webhookWaitMs });

    await drained(harness);
    const stored = await store.webhook(accepted.webhook_id);
    expect(stored).toMatchObject({ state: 'completed', entity_id: accepted.entity_id });
    expect(stored?.actions).toMatchObject([
      { name: 'notify_customer', state: 'completed', attempts: 1 },
    ]);
    expect(stored?.actions[0]?.history).toHaveLength(1);
    expect(await new RejectedChanges(harness.redis, harness.prefix).count()).toBe(0);
  });
}

test("a change whose webhook's own change never comes waits without reading it again and again, then is set aside", async () => {
  const { store } = await schemaStore(harness);
  let batches = 0;
  const counting = Object.assign(Object.create(store) as typeof store, {
    writeBatch: (changes: Parameters<typeof store.writeBatch>[0]) => {
      batches += 1;
      return store.writeBatch(changes);
    },
  });
  const stream = recordStreamKey(harness.prefix);
  // The webhook's change gone from the stream (an operator deleted it, say): its completion alone.
  const accepted = job(['notify_customer']);
  await harness.intake.add(accepted);
  await harness.redis.del(stream);
  const timing = { started_at: accepted.received_at, status: 200, duration_ms: 1 };
  await harness.outcomes.completed(accepted.webhook_id, 'notify_customer', timing, 1, true);

  await startRecorder(harness, counting, { claimIdleMs: 200, webhookWaitMs: 2000 });
  // Once the recorder has tried it, it waits, pending: not set aside.
  const rejected = new RejectedChanges(harness.redis, harness.prefix);
  while (batches === 0) await setTimeout(20);
  expect(await rejected.count()).toBe(0);
  expect(await harness.redis.xlen(stream)).toBe(1);
  await drained(harness);
  expect(await rejected.list({ limit: 10 })).toMatchObject({
    rejected: [{ kind: 'completed', webhook_id: accepted.webhook_id, error: { code: '23503' } }],
  });
  // Read again once per take-over (every 200 ms, once idle 200 ms) over the 2 s it waited, each
  // read a batch and the change alone: never read again at once.
  expect(batches).toBeLessThanOrEqual(2 * (2000 / 200 + 2));
});

test("changes left waiting, more than a batch of them, do not keep a dead recorder's later changes from being taken over", async () => {
  const { store } = await schemaStore(harness);
  const stream = recordStreamKey(harness.prefix);
  await harness.redis.xgroup('CREATE', stream, RECORDER_GROUP, '0', 'MKSTREAM');
  const timing = { started_at: new Date().toISOString(), status: 200, duration_ms: 1 };
  // Three completions whose webhooks' own changes are gone: they wait, for long.
  const lost = [job(['notify_customer']), job(['notify_customer']), job(['notify_customer'])];
  for (const webhook of lost) await harness.intake.add(webhook);
  await harness.redis.del(stream);
  await harness.redis.xgroup('CREATE', stream, RECORDER_GROUP, '0', 'MKSTREAM');
  for (const webhook of lost) {
    await harness.outcomes.completed(webhook.webhook_id, 'notify_customer', timing, 1, true);
  }
  await startRecorder(harness, store, { consumer: 'live', claimIdleMs: 300, batchSize: 2 });
  const live = async () =>
    (await harness.redis.xpending(stream, RECORDER_GROUP)) as [number, ...unknown[]];
  while ((await live())[0] < 3) await setTimeout(20);

  // Then a webhook whose own change a recorder takes and dies with; its completion, later.
  const accepted = job(['notify_customer']);
  await harness.intake.add(accepted);
  await harness.redis.xreadgroup(
    'GROUP',
    RECORDER_GROUP,
    'died',
    'COUNT',
    1,
    'STREAMS',
    stream,
    '>',
  );
  await harness.outcomes.completed(accepted.webhook_id, 'notify_customer', timing, 1, true);

  // Taken over past the three idle ones before it, written, and its completion after it.
  while ((await store.webhook(accepted.webhook_id))?.state !== 'completed') await setTimeout(50);
  expect(await harness.redis.xlen(stream)).toBe(3);
}, 30_000);
