// Record changes the store refused, as operators handle them: listed a page at a time with the
// store's reason, re-driven onto the record stream after a fix (keeping their place in the order
// of changes), or discarded with a reason; both audited. The changes are set aside as the
// recorder sets them aside, through RejectedChanges on the dashboard's prefix.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ORIGIN_FIELD, RejectedChanges } from '@pw/records';
import type { RejectedChange } from '@pw/records';
import { recordStreamKey } from '@pw/shared/records';
import { AUTH, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
beforeEach(() => {
  h = startDashboard();
});
afterEach(() => h.close());

const records = () => recordStreamKey(h.prefix);

/** `count` webhook changes put on the record stream, then set aside as PostgreSQL refused them. */
async function setAside(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const data = JSON.stringify({ webhook_id: `wh_rejected${String(n).padStart(11, '0')}` });
    ids.push((await h.redis.xadd(records(), '*', 'k', 'webhook', 'd', data)) ?? '');
  }
  const entries = (await h.redis.xrange(records(), '-', '+')) as [string, string[]][];
  const refusal = Object.assign(new Error('index row size 3216 exceeds maximum 2704'), {
    code: '54000',
  });
  await new RejectedChanges(h.redis, h.prefix).setAside(
    entries.map(([id, fields]) => ({ id, fields, error: refusal })),
  );
  await h.redis.del(records());
  return ids;
}

const listed = async (query = '') => {
  const response = await h.as('get', `/api/record-changes/rejected${query}`);
  expect(response.status).toBe(200);
  return response.body as { rejected: RejectedChange[]; next_cursor: string | null };
};

it('lists the set-aside changes newest first, a page at a time, with the store refusal', async () => {
  const changeIds = await setAside(5);
  const first = await listed('?limit=3');
  expect(first.rejected.map((change) => change.change_id)).toEqual(changeIds.slice(2).reverse());
  expect(first.rejected[0]).toMatchObject({
    kind: 'webhook',
    webhook_id: 'wh_rejected00000000004',
    error: { code: '54000', message: 'index row size 3216 exceeds maximum 2704' },
    data: { webhook_id: 'wh_rejected00000000004' },
  });
  const second = await listed(`?limit=3&cursor=${first.next_cursor ?? ''}`);
  expect(second.rejected.map((change) => change.change_id)).toEqual(
    changeIds.slice(0, 2).reverse(),
  );
  expect(second.next_cursor).toBeNull();
  for (const query of ['?cursor=nonsense', '?limit=0', '?limit=501', '?other=1']) {
    const response = await h.as('get', `/api/record-changes/rejected${query}`);
    expect(response.status, query).toBe(400);
    expect((response.body as { error: { code: string } }).error.code).toBe('invalid_query');
  }
});

it('re-drives the named changes, or all, back onto the record stream with their first ids; audited', async () => {
  const changeIds = await setAside(3);
  const [newest] = (await listed()).rejected;
  const one = await h
    .as('post', '/api/record-changes/rejected/redrive')
    .send({ ids: [newest?.id] });
  expect(one.status).toBe(202);
  expect(one.body).toEqual({ redriven: [newest?.id] });
  const rest = await h.as('post', '/api/record-changes/rejected/redrive');
  expect(rest.status).toBe(202);
  expect((rest.body as { redriven: string[] }).redriven).toHaveLength(2);
  expect((await listed()).rejected).toEqual([]);

  // Back on the record stream, each naming the id that orders it, with its own fields.
  const back = (await h.redis.xrange(records(), '-', '+')) as [string, string[]][];
  const changes = back.filter(([, fields]) => fields.includes('webhook'));
  const origins = changes.map(([, fields]) => fields[fields.indexOf(ORIGIN_FIELD) + 1]);
  expect(origins.sort()).toEqual([...changeIds].sort());
  expect(changes[0]?.[1].slice(0, 2)).toEqual(['k', 'webhook']);
  const audits = back.filter(([, fields]) => fields.includes('audit'));
  expect(audits.map(([, fields]) => JSON.parse(fields[3] ?? '{}') as unknown)).toMatchObject([
    {
      action: 'record_changes_redrive',
      user: AUTH.user,
      details: { ids: [newest?.id], all: false },
    },
    { action: 'record_changes_redrive', details: { all: true } },
  ]);
});

it('discards only with a reason, audited with it', async () => {
  await setAside(2);
  const [newest, oldest] = (await listed()).rejected;
  const path = '/api/record-changes/rejected/discard';
  expect((await h.as('post', path).send({ ids: [newest?.id] })).status).toBe(400);
  expect((await h.as('post', path).send({ ids: [], reason: 'x' })).status).toBe(400);
  const discarded = await h
    .as('post', path)
    .send({ ids: [newest?.id, '1-1'], reason: 'test data from a load test' });
  expect(discarded.status).toBe(200);
  expect(discarded.body).toEqual({ discarded: [newest?.id] });
  expect((await listed()).rejected.map((change) => change.id)).toEqual([oldest?.id]);
  const [, fields] = ((await h.redis.xrange(records(), '-', '+')) as [string, string[]][])[0] ?? [];
  expect(JSON.parse(fields?.[3] ?? '{}')).toMatchObject({
    action: 'record_changes_discard',
    details: { ids: [newest?.id], reason: 'test data from a load test' },
  });
});
