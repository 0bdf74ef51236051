// Cross-site requests cannot change anything (docs/operations.md): a foreign page's form or fetch
// reaches the dashboard with the operator's cached basic-auth credentials attached, so the answer
// depends on where the request comes from, not on the credentials.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES } from '@pw/shared/rules';
import { AUTH, HOST, OWN_ORIGIN, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
let behindProxy: DashboardHarness;
beforeAll(async () => {
  h = startDashboard();
  behindProxy = startDashboard({ publicUrl: 'https://ops.example.com/dashboard/' });
  await h.circuits.register([TARGET]);
});
afterAll(async () => {
  await h.close();
  await behindProxy.close();
});

const TARGET = 'http://127.0.0.1:4010 partner/partner-webhooks';
const RULES = { rules: [{ event_type: 'quote.status_changed', action: 'notify_customer' }] };
const forbidden = { code: 'forbidden_origin', message: expect.any(String) as string, details: [] };
const rulesCount = async (d: DashboardHarness) =>
  ((await d.as('get', '/api/rules')).body as { rules: unknown[] }).rules.length;

describe('cross-site requests are refused', () => {
  it('refuses a change from a foreign Origin with 403 forbidden_origin, on the API (every route the console posts to) and the board', async () => {
    for (const [method, path] of [
      ['put', '/api/rules'],
      ['post', '/api/rules/preview'],
      ['post', '/api/dead-letters/replay'],
      ['post', '/api/dead-letters/replay?dry_run=true'],
      ['post', '/api/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA/replay'],
      ['post', '/api/quarantine/wh_AAAAAAAAAAAAAAAAAAAAAA/release'],
      ['post', '/api/quarantine/wh_AAAAAAAAAAAAAAAAAAAAAA/discard'],
      ['post', '/api/quarantine/release'],
      ['post', '/api/quarantine/release?dry_run=true'],
      ['put', `/api/circuits/${encodeURIComponent(TARGET)}`],
      ['put', '/admin/queues/api/queues/actions/pause'],
      ['put', '/admin/queues/api/queues/actions/retry/failed'],
      ['post', '/admin/queues/api/queues/actions/add'],
    ] as const) {
      // A body each API route would act on, were the request let through.
      const response = await h
        .as(method, path)
        .set('Origin', 'https://evil.example')
        .send({ ...RULES, state: 'open', reason: 'cross-site' });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((response.body as { error: unknown }).error).toEqual(forbidden);
    }
    expect(await rulesCount(h)).toBe(DEFAULT_RULES.length);
    expect(await h.actions.isPaused()).toBe(false);
    expect(await h.circuits.view(TARGET)).toMatchObject({ state: 'closed', manual: false });
  });

  it('refuses before basic auth: no credentials still get 403, never a password prompt', async () => {
    const response = await request(h.app)
      .put('/api/rules')
      .set('Host', HOST)
      .set('Origin', 'https://evil.example')
      .send(RULES);
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBeUndefined();
  });

  it('refuses Sec-Fetch-Site: cross-site even without an Origin', async () => {
    const response = await h
      .as('put', '/api/rules')
      .unset('Origin')
      .set('Sec-Fetch-Site', 'cross-site')
      .send(RULES);
    expect(response.status).toBe(403);
    expect((response.body as { error: { code: string } }).error.code).toBe('forbidden_origin');
    expect(await rulesCount(h)).toBe(DEFAULT_RULES.length);
  });

  it('takes another scheme, port or host, and the opaque origin "null", as foreign', async () => {
    for (const origin of [
      'https://dashboard.test:3001',
      'http://dashboard.test:3002',
      'http://dashboard.test',
      'http://sub.dashboard.test:3001',
      'null',
    ]) {
      const response = await h.as('put', '/api/rules').set('Origin', origin).send(RULES);
      expect(response.status, origin).toBe(403);
    }
  });
});

// After the refusals above, which count on the rules being still the defaults.
describe('own-origin requests and reads go through', () => {
  it('lets the own origin, same-origin fetches, Origin-less clients (curl) and reads through', async () => {
    const own = await h.as('put', '/api/rules').set('Sec-Fetch-Site', 'same-origin').send(RULES);
    expect(own.status).toBe(200);
    // The same origin written differently by the client still is the same origin.
    const upper = await h
      .as('put', '/api/rules')
      .set('Origin', 'HTTP://Dashboard.Test:3001')
      .send(RULES);
    expect(upper.status).toBe(200);
    const curl = await request(h.app).put('/api/rules').auth(AUTH.user, AUTH.password).send(RULES);
    expect(curl.status).toBe(200);
    const read = await h.as('get', '/api/rules').set('Origin', 'https://evil.example');
    expect(read.status).toBe(200);
    const board = await h
      .as('get', '/admin/queues/api/queues')
      .set('Origin', 'https://evil.example')
      .set('Sec-Fetch-Site', 'cross-site');
    expect(board.status).toBe(200);
  });

  it('behind a proxy, DASHBOARD_PUBLIC_URL is the own origin and the Host seen is not', async () => {
    const viaProxy = await behindProxy
      .as('put', '/api/rules')
      .set('Origin', 'https://ops.example.com')
      .send(RULES);
    expect(viaProxy.status).toBe(200);
    const reached = await behindProxy.as('put', '/api/rules').set('Origin', OWN_ORIGIN).send(RULES);
    expect(reached.status).toBe(403);
    const plain = await behindProxy
      .as('put', '/api/rules')
      .set('Origin', 'http://ops.example.com')
      .send(RULES);
    expect(plain.status).toBe(403);
  });
});
