// The record store's routes of the operator API: their refusals, and what they answer without a
// store. (What they find is tested end to end in tests/e2e/test/records.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStore } from '@pw/records';
import { testSchema } from '@pw/test-utils';
import type { TestSchema } from '@pw/test-utils';
import { startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let schema: TestSchema;
let store: RecordStore;
let h: DashboardHarness;
let bare: DashboardHarness;
beforeAll(async () => {
  schema = await testSchema();
  store = await RecordStore.open({ databaseUrl: schema.databaseUrl, schema: schema.schema });
  h = startDashboard({ records: store });
  bare = startDashboard();
});
afterAll(async () => {
  await Promise.all([h.close(), bare.close()]);
  await store.close();
  await schema.drop();
});

describe('search, audit log and ledger', () => {
  it('answer from the store: an empty store, empty pages and a balanced empty ledger', async () => {
    const search = await h.as('get', '/api/webhooks?customer_id=C-1');
    expect(search.status).toBe(200);
    expect(search.body).toEqual({ webhooks: [], next_cursor: null });
    expect((await h.as('get', '/api/audit')).body).toEqual({ entries: [], next_cursor: null });
    const ledger = await h.as(
      'get',
      '/api/ledger?from=2026-11-23T10:00:00Z&to=2026-11-23T11:00:00Z',
    );
    expect(ledger.body).toMatchObject({ accepted: 0, in_flight: 0, balanced: true });
  });

  it('refuse a query they cannot read with 400 invalid_query, at its fields', async () => {
    for (const [path, field] of [
      ['/api/webhooks?state=lost', 'state'],
      ['/api/webhooks?limit=501', 'limit'],
      ['/api/webhooks?from=yesterday', 'from'],
      ['/api/webhooks?cursor=not-a-cursor', 'cursor'],
      ['/api/webhooks?entity_id=Q-1&surprise=1', ''],
      ['/api/audit?cursor=%FF%FE', 'cursor'],
      ['/api/ledger?from=2026-11-23T10:00:00Z', 'to'],
    ] as const) {
      const response = await h.as('get', path);
      expect(response.status, path).toBe(400);
      expect(response.body.error.code, path).toBe('invalid_query');
      expect(
        (response.body.error.details as { path: string }[]).some((d) => d.path === field),
        path,
      ).toBe(true);
    }
  });

  it('answer 503 store_unavailable without a store, and other routes still work', async () => {
    for (const path of ['/api/webhooks', '/api/audit', '/api/ledger?from=a&to=b']) {
      const response = await bare.as('get', path);
      expect(response.status, path).toBe(503);
      expect(response.body.error.code).toBe('store_unavailable');
    }
    expect((await bare.as('get', '/api/rules')).status).toBe(200);
    expect((await bare.as('get', '/api/nothing-here')).status).toBe(404);
  });
});
