// The operator API while the record store cannot be reached: a real PostgreSQL behind a TCP proxy
// that the test cuts (the shared PostgreSQL itself keeps running), and a store at a closed port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStore } from '@pw/records';
import { freePort, startTcpProxy, testSchema, throughProxy } from '@pw/test-utils';
import type { TcpProxy, TestSchema } from '@pw/test-utils';
import { startDashboard, webhookOf } from './harness.js';
import type { DashboardHarness } from './harness.js';

let schema: TestSchema;
let proxy: TcpProxy;
let proxied: RecordStore;
let nowhere: RecordStore;
let h: DashboardHarness;
let closed: DashboardHarness;
beforeAll(async () => {
  schema = await testSchema();
  // Opening migrates the test's schema, straight to PostgreSQL.
  await (
    await RecordStore.open({ databaseUrl: schema.databaseUrl, schema: schema.schema })
  ).close();
  const direct = new URL(schema.databaseUrl);
  proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  proxied = RecordStore.connect({
    databaseUrl: throughProxy(schema.databaseUrl, proxy),
    schema: schema.schema,
  });
  const closedUrl = new URL(schema.databaseUrl);
  closedUrl.port = String(await freePort());
  nowhere = RecordStore.connect({ databaseUrl: closedUrl.toString(), schema: schema.schema });
  h = startDashboard({ records: proxied });
  closed = startDashboard({ records: nowhere });
});
afterAll(async () => {
  await Promise.all([h.close(), closed.close()]);
  await Promise.all([proxied.close(), nowhere.close()]);
  await proxy.close();
  await schema.drop();
});

/** Every read of the record store the operator API makes. */
const STORE_READS = [
  '/api/webhooks?customer_id=C-1',
  '/api/audit',
  '/api/ledger?from=2026-11-23T10:00:00Z&to=2026-11-23T11:00:00Z',
  // Unknown to Redis: only the store could say whether it exists.
  '/api/webhooks/wh_onlyinthestore00000000',
];

async function expectStoreUnavailable(dashboard: DashboardHarness) {
  for (const path of STORE_READS) {
    const response = await dashboard.as('get', path);
    expect(response.status, path).toBe(503);
    expect(response.headers['retry-after'], path).toBe('10');
    expect(response.body, path).toMatchObject({ error: { code: 'store_unavailable' } });
  }
}

describe('the operator API while the record store cannot be reached', () => {
  it('answers 503 store_unavailable with Retry-After while the line to PostgreSQL is cut, and 200 once it is back', async () => {
    for (const path of STORE_READS.slice(0, 3)) {
      expect((await h.as('get', path)).status, path).toBe(200);
    }
    proxy.cut();
    try {
      await expectStoreUnavailable(h);
      // A webhook Redis still holds is answered from there, without history.
      const webhookId = 'wh_inredisonly00000000000';
      await h.intake.add(webhookOf(webhookId, 'quote.status_changed', ['notify_customer']));
      const hot = await h.as('get', `/api/webhooks/${webhookId}`);
      expect(hot.status).toBe(200);
      expect(hot.body).toMatchObject({ state: 'queued', actions: [{ history: [] }] });
      // The rest of the dashboard works.
      expect((await h.as('get', '/api/rules')).status).toBe(200);
    } finally {
      proxy.mend();
    }
    for (const path of STORE_READS.slice(0, 3)) {
      expect((await h.as('get', path)).status, path).toBe(200);
    }
    expect(h.logs).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'record store unavailable' }),
    );
  });

  it('answers 503 store_unavailable with Retry-After when nothing listens at the store’s address', async () => {
    await expectStoreUnavailable(closed);
  });
});
