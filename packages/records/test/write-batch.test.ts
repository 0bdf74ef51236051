import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { MAX_ERROR_LENGTH } from '@pw/shared/outcomes';
import type { RecordChange } from '../src/index.js';
import { accepted, action, audit, completion, outcome, webhookId } from './changes.js';
import { tableContents, test } from './store-fixture.js';

const id = webhookId(1);
const at = (second: number) => `2025-03-01T10:00:${String(second).padStart(2, '0')}.000Z`;

/** `notify_crm`'s first call, failed for good at `at(5)` with `status` and `error`. */
const failedCall = (status: number, error: string) => ({
  action: 'notify_crm',
  attempt: 1,
  started_at: at(4),
  finished_at: at(5),
  outcome: 'failed' as const,
  status,
  error,
  duration_ms: 3.6,
});

/** A webhook whose `notify_crm` is tried three times (503, 503, 200); `report` stays waiting. */
function threeAttempts(): RecordChange[] {
  const actions = (crm: Parameters<typeof action>[1]) => [
    action('notify_crm', crm),
    action('report', { state: 'completed', completed_at: at(1) }),
  ];
  const attempt = (n: number, outcome: 'retrying' | 'completed', status: number) => ({
    action: 'notify_crm',
    attempt: n,
    started_at: at(n * 10),
    finished_at: at(n * 10 + 1),
    outcome,
    status,
    error: outcome === 'completed' ? null : `partner answered ${status}`,
    duration_ms: 12,
  });
  const retrying = (n: number) => ({
    state: 'retrying' as const,
    attempts: n,
    last_error: 'partner answered 503',
  });
  return [
    accepted(1n, { webhook_id: id, actions: ['notify_crm', 'report'], customer_id: 'C-9' }),
    outcome(
      2n,
      at(11),
      { webhook_id: id, actions: actions(retrying(1)) },
      attempt(1, 'retrying', 503),
    ),
    outcome(
      3n,
      at(21),
      { webhook_id: id, actions: actions(retrying(2)) },
      attempt(2, 'retrying', 503),
    ),
    outcome(
      4n,
      at(31),
      {
        webhook_id: id,
        actions: actions({ state: 'completed', attempts: 3, completed_at: at(31) }),
      },
      attempt(3, 'completed', 200),
    ),
  ];
}

describe('writeBatch: a webhook and its attempts', () => {
  test('a webhook tried three times reads back with the three attempts in its history', async ({
    store,
  }) => {
    await store.writeBatch(threeAttempts());
    const record = await store.webhook(id);
    expect(record).toMatchObject({
      webhook_id: id,
      customer_id: 'C-9',
      state: 'completed',
      finished_at: at(31),
      event: { event_id: `evt_${id}` },
    });
    expect(record?.actions.map((each) => each.name)).toEqual(['notify_crm', 'report']);
    const [crm, report] = record?.actions ?? [];
    expect(crm).toMatchObject({ state: 'completed', attempts: 3, last_error: null });
    expect(crm?.history.map((entry) => [entry.attempt, entry.status, entry.outcome])).toEqual([
      [1, 503, 'retrying'],
      [2, 503, 'retrying'],
      [3, 200, 'completed'],
    ]);
    expect(crm?.history[0]).toEqual({
      attempt: 1,
      started_at: at(10),
      finished_at: at(11),
      outcome: 'retrying',
      status: 503,
      error: 'partner answered 503',
      duration_ms: 12,
    });
    expect(report?.history).toEqual([]);
  });

  test('the same batch written twice leaves every row as it was', async ({ store, db }) => {
    const batch = [...threeAttempts(), audit(5n, { at: at(40) })];
    await store.writeBatch(batch);
    const first = await tableContents(db);
    await store.writeBatch(batch);
    await store.writeBatch(batch.toReversed());
    // xmin included: not even rewritten with the same values.
    expect(await tableContents(db)).toEqual(first);
    expect(first.attempts).toHaveLength(3);
  });

  test('one change twice in a batch is written once', async ({ store, db }) => {
    const batch = threeAttempts();
    await store.writeBatch([...batch, ...batch]);
    expect((await tableContents(db)).attempts).toHaveLength(3);
  });
});

describe('writeBatch: changes out of order', () => {
  test('an older change written after a newer one does not move the record back', async ({
    store,
  }) => {
    const [webhook, first, second, done] = threeAttempts() as [
      RecordChange,
      RecordChange,
      RecordChange,
      RecordChange,
    ];
    await store.writeBatch([webhook, done]);
    await store.writeBatch([second]);
    await store.writeBatch([first]);
    const record = await store.webhook(id);
    expect(record).toMatchObject({ state: 'completed', finished_at: at(31) });
    expect(record?.actions[0]).toMatchObject({ state: 'completed', attempts: 3, last_error: null });
    // The late changes' attempts still join the history, in their order.
    expect(record?.actions[0]?.history.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
  });

  test('an outcome recorded before its webhook change keeps the event the webhook change brings', async ({
    store,
  }) => {
    const [webhook, first, second] = threeAttempts() as [RecordChange, RecordChange, RecordChange];
    await store.writeBatch([second]);
    expect(await store.webhook(id)).toMatchObject({
      event: null,
      customer_id: null,
      state: 'processing',
    });
    await store.writeBatch([webhook]);
    await store.writeBatch([first]);
    const record = await store.webhook(id);
    expect(record).toMatchObject({
      event: { event_id: `evt_${id}` },
      customer_id: 'C-9',
      state: 'processing',
    });
    expect(record?.actions[0]).toMatchObject({ state: 'retrying', attempts: 2 });
  });

  test('a batch holding the webhook change after its outcome keeps both', async ({ store }) => {
    const [webhook, , second] = threeAttempts() as [RecordChange, RecordChange, RecordChange];
    await store.writeBatch([second, webhook]);
    expect(await store.webhook(id)).toMatchObject({
      event: { event_id: `evt_${id}` },
      customer_id: 'C-9',
      state: 'processing',
    });
  });
});

describe('writeBatch: completions, which come as changes of their own', () => {
  // `notify_crm`'s call completes (a `completion` change); `report` retries. The hot record has
  // the completion before the stream does: later snapshots have notify_crm completed.
  const snapshot = (
    seq: bigint,
    second: number,
    crm: Parameters<typeof action>[1],
    report: Parameters<typeof action>[1],
  ) =>
    outcome(seq, at(second), {
      webhook_id: id,
      actions: [action('notify_crm', crm), action('report', report)],
    });
  const crmDone = { state: 'completed', attempts: 1, completed_at: at(2) } as const;

  test('a completion and the later snapshots that have it finish the webhook with its call in the history', async ({
    store,
  }) => {
    const finished = await store.writeBatch([
      accepted(1n, { webhook_id: id, actions: ['notify_crm', 'report'] }),
      completion(2n, at(2), id, 'notify_crm'),
      snapshot(3n, 3, crmDone, { state: 'retrying', attempts: 1, last_error: 'answered 503' }),
    ]);
    expect(finished).toEqual([]);
    expect(await store.webhook(id)).toMatchObject({ state: 'processing', finished_at: null });
    const later = await store.writeBatch([
      snapshot(4n, 4, crmDone, { state: 'completed', attempts: 2, completed_at: at(4) }),
    ]);
    expect(later).toEqual([id]);
    const record = await store.webhook(id);
    expect(record).toMatchObject({ state: 'completed', finished_at: at(4) });
    expect(record?.actions[0]).toMatchObject({
      name: 'notify_crm',
      state: 'completed',
      attempts: 1,
      completed_at: at(2),
    });
    expect(record?.actions[0]?.history).toEqual([
      {
        attempt: 1,
        started_at: at(2),
        finished_at: at(2),
        outcome: 'completed',
        status: 200,
        error: null,
        duration_ms: 4,
      },
    ]);
  });

  test('a snapshot older than the completion, written after it, does not move it back', async ({
    store,
  }) => {
    await store.writeBatch([
      accepted(1n, { webhook_id: id, actions: ['notify_crm'] }),
      completion(3n, at(3), id, 'notify_crm'),
    ]);
    expect(await store.webhook(id)).toMatchObject({ state: 'completed' });
    // Written late (a change set aside and re-driven keeps its place): older, so it loses.
    const earlier = outcome(2n, at(2), {
      webhook_id: id,
      actions: [action('notify_crm', { state: 'retrying', attempts: 1, last_error: 'x' })],
    });
    expect(await store.writeBatch([earlier])).toEqual([id]);
    expect(await store.webhook(id)).toMatchObject({
      state: 'completed',
      actions: [{ state: 'completed', attempts: 1, last_error: null }],
    });
  });

  test('a webhook whose only action completes first time is completed, once', async ({ store }) => {
    const batch = [accepted(1n, { webhook_id: id }), completion(2n, at(2), id, 'notify_crm')];
    expect(await store.writeBatch(batch)).toEqual([id]);
    // Written again (a recorder stopped before it acknowledged the batch): the same answer.
    expect(await store.writeBatch(batch)).toEqual([id]);
    const record = await store.webhook(id);
    expect(record).toMatchObject({ state: 'completed', finished_at: at(2) });
    expect(record?.actions[0]?.history).toHaveLength(1);
  });
});

describe('writeBatch: finishing and limits', () => {
  test('a failed webhook is finished once its last action is', async ({ store }) => {
    const failed = action('notify_crm', { state: 'failed', attempts: 8, last_error: 'gone' });
    await store.writeBatch([
      accepted(1n, { webhook_id: id, actions: ['notify_crm', 'report'] }),
      outcome(2n, at(5), {
        webhook_id: id,
        actions: [failed, action('report', { state: 'active' })],
      }),
    ]);
    expect(await store.webhook(id)).toMatchObject({ state: 'failed', finished_at: null });
    const report = action('report', { state: 'completed', attempts: 1, completed_at: at(9) });
    await store.writeBatch([outcome(3n, at(9), { webhook_id: id, actions: [failed, report] })]);
    expect(await store.webhook(id)).toMatchObject({ state: 'failed', finished_at: at(9) });
  });

  test('errors are kept to 500 characters', async ({ store }) => {
    const long = 'x'.repeat(2000);
    const failed = action('notify_crm', { state: 'failed', attempts: 1, last_error: long });
    await store.writeBatch([
      outcome(2n, at(5), { webhook_id: id, actions: [failed] }, failedCall(400, long)),
    ]);
    const crm = (await store.webhook(id))?.actions[0];
    expect(crm?.last_error).toHaveLength(MAX_ERROR_LENGTH);
    expect(crm?.history[0]?.error).toHaveLength(MAX_ERROR_LENGTH);
    expect(crm?.history[0]?.duration_ms).toBe(4);
  });

  test('an action keeps its last 20 attempts in its history', async ({ store }) => {
    const changes = Array.from({ length: 25 }, (_, n) =>
      outcome(
        BigInt(n + 2),
        at(n + 1),
        { webhook_id: id, actions: [action('notify_crm', { state: 'retrying', attempts: n + 1 })] },
        {
          action: 'notify_crm',
          attempt: n + 1,
          started_at: at(n),
          finished_at: at(n + 1),
          outcome: 'retrying',
          status: 503,
          error: 'busy',
          duration_ms: 1,
        },
      ),
    );
    await store.writeBatch(changes);
    const history = (await store.webhook(id))?.actions[0]?.history ?? [];
    expect(history.map((entry) => entry.attempt)).toEqual(
      Array.from({ length: 20 }, (_, n) => n + 6),
    );
  });
});

describe('writeBatch: ids and values as given', () => {
  test('ids of any length are written and found: 3 KB random entity and customer ids', async ({
    store,
  }) => {
    // Random bytes do not compress: an index on the id itself refused such a row (SQLSTATE
    // 54000, index row size over 2,704 bytes), so the record store stopped.
    const entity = randomBytes(2300).toString('base64');
    const customer = randomBytes(2300).toString('hex');
    await store.writeBatch([
      accepted(1n, { webhook_id: id, entity_id: entity, customer_id: customer }),
    ]);
    for (const filter of [{ entity_id: entity }, { customer_id: customer }, { q: entity }]) {
      const page = await store.search(filter);
      expect(page.webhooks.map((webhook) => webhook.webhook_id)).toEqual([id]);
    }
    expect(await store.search({ entity_id: entity.slice(0, -1) })).toMatchObject({ webhooks: [] });
  });
});

describe('writeBatch: text the store keeps', () => {
  test('U+0000, which PostgreSQL cannot hold, is stored as U+FFFD, in values and keys alike', async ({
    store,
  }) => {
    const failed = action('notify_crm', { state: 'failed', attempts: 1, last_error: 'bad\u0000' });
    await store.writeBatch([
      accepted(1n, {
        webhook_id: id,
        entity_id: 'Q-\u0000',
        customer_id: 'C-\u0000',
        event: { note: 'a\u0000b', 'key\u0000': ['\u0000'], path: 'C:\\u0000' },
      }),
      outcome(2n, at(5), { webhook_id: id, entity_id: 'Q-\u0000', actions: [failed] }),
      audit(3n, { at: at(6), target: 'wh_\u0000', details: { reason: 'x\u0000' } }),
    ]);
    const stored = await store.webhook(id);
    expect(stored).toMatchObject({
      entity_id: 'Q-\ufffd',
      customer_id: 'C-\ufffd',
      event: { note: 'a\ufffdb', 'key\ufffd': ['\ufffd'], path: 'C:\\u0000' },
    });
    expect(stored?.actions[0]?.last_error).toBe('bad\ufffd');
    const [entry] = (await store.audit()).entries;
    expect(entry).toMatchObject({ target: 'wh_\ufffd', details: { reason: 'x\ufffd' } });
    // Found by what the store holds.
    expect((await store.search({ customer_id: 'C-\ufffd' })).webhooks).toHaveLength(1);
  });

  test('a lone surrogate, which jsonb refuses, is stored as U+FFFD in every text; a whole pair is kept', async ({
    store,
  }) => {
    // A partner's error body cut after the first half of an emoji, as the worker once cut it.
    const cut = `${'a'.repeat(199)}\ud83d`;
    const failed = action('notify_crm', { state: 'failed', attempts: 1, last_error: cut });
    await store.writeBatch([
      accepted(1n, {
        webhook_id: id,
        customer_id: 'C-\udfff',
        event: { note: 'a\udc00b', 'key\ud800': ['\udbff\udbff'], ok: '😀', literal: '\\ud800' },
      }),
      outcome(2n, at(5), { webhook_id: id, actions: [failed] }, failedCall(422, cut)),
      audit(3n, { at: at(6), target: 'wh_\ud800', details: { reason: 'because\ud83d' } }),
    ]);
    const stored = await store.webhook(id);
    expect(stored).toMatchObject({
      state: 'failed',
      customer_id: 'C-\ufffd',
      event: { note: 'a\ufffdb', 'key\ufffd': ['\ufffd\ufffd'], ok: '😀', literal: '\\ud800' },
    });
    const kept = `${'a'.repeat(199)}\ufffd`;
    expect(stored?.actions[0]).toMatchObject({ state: 'failed', last_error: kept });
    expect(stored?.actions[0]?.history.map((entry) => entry.error)).toEqual([kept]);
    const [entry] = (await store.audit()).entries;
    expect(entry).toMatchObject({ target: 'wh_\ufffd', details: { reason: 'because\ufffd' } });
    expect((await store.search({ state: 'failed' })).webhooks.map((w) => w.webhook_id)).toEqual([
      id,
    ]);
  });
});

describe('writeBatch: values read back', () => {
  test('an unknown webhook is null', async ({ store }) => {
    expect(await store.webhook(webhookId(404))).toBeNull();
  });

  test('seq beyond what a JavaScript number holds exactly is kept exactly', async ({
    store,
    db,
  }) => {
    const seq = (1_750_000_000_000n << 20n) + 3n;
    await store.writeBatch([accepted(seq, { webhook_id: id })]);
    expect((await db.query('select seq::text from webhooks')).rows).toEqual([
      { seq: seq.toString() },
    ]);
  });
});

describe('audit', () => {
  test('entries read back newest first, a page at a time', async ({ store }) => {
    await store.writeBatch([
      audit(1n, {
        at: at(1),
        action: 'replay',
        target: 'wh_a',
        details: { actions: ['notify_crm'] },
      }),
      audit(2n, { at: at(2), action: 'rules_replaced', target: 'rules' }),
      audit(3n, { at: at(2), action: 'board_retry', target: 'pw-actions', user: 'ops' }),
    ]);
    const first = await store.audit({ limit: 2 });
    expect(first.entries).toEqual([
      { at: at(2), user: 'ops', action: 'board_retry', target: 'pw-actions', details: {} },
      { at: at(2), user: 'admin', action: 'rules_replaced', target: 'rules', details: {} },
    ]);
    const second = await store.audit({ limit: 2, cursor: first.next_cursor ?? '' });
    expect(second).toEqual({
      entries: [
        {
          at: at(1),
          user: 'admin',
          action: 'replay',
          target: 'wh_a',
          details: { actions: ['notify_crm'] },
        },
      ],
      next_cursor: null,
    });
  });
});
