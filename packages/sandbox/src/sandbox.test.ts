import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerApiStandIn } from './partner-api.js';
import { startSandbox } from './sandbox.js';
import type { Sandbox } from './sandbox.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ accessTokenTtlSeconds: 2 });
});
afterAll(async () => {
  await sandbox.stop();
});

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

const requestToken = () =>
  fetch(
    sandbox.idp.tokenUrl,
    form({
      client_id: sandbox.env.AUTH_CLIENT_ID,
      client_secret: sandbox.env.AUTH_CLIENT_SECRET,
      grant_type: 'client_credentials',
      scope: 'openid',
    }),
  );

async function token(): Promise<string> {
  const response = await requestToken();
  return ((await response.json()) as { access_token: string }).access_token;
}

const post = (
  path: string,
  accessToken: string,
  body: unknown = { hello: 'partner' },
  headers: Record<string, string> = {},
) =>
  fetch(`${sandbox.env.API_BASE_URL}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'idempotency-key': 'wh_x:notify',
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });

describe('identity provider', () => {
  it('grants client credentials at the Keycloak path, scope openid, with the configured lifetime', async () => {
    const response = await requestToken();
    expect(sandbox.idp.tokenUrl).toBe(
      `${sandbox.env.AUTH_URL}/realms/partner/protocol/openid-connect/token`,
    );
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 2, scope: 'openid' });
    expect(await sandbox.idp.isIssued(String(body.access_token))).toBe(true);
    expect(await sandbox.idp.isIssued('made-up-token')).toBe(false);
  });

  it('publishes discovery under the realm, with the Keycloak token endpoint', async () => {
    const discovery = (await (
      await fetch(`${sandbox.env.AUTH_URL}/realms/partner/.well-known/openid-configuration`)
    ).json()) as { issuer: string; token_endpoint: string };
    expect(discovery.issuer).toBe(`${sandbox.env.AUTH_URL}/realms/partner`);
    expect(discovery.token_endpoint).toBe(sandbox.idp.tokenUrl);
  });

  it('accepts client_secret_basic too, and refuses a wrong secret with invalid_client', async () => {
    const basic = Buffer.from(
      `${sandbox.env.AUTH_CLIENT_ID}:${sandbox.env.AUTH_CLIENT_SECRET}`,
    ).toString('base64');
    const ok = await fetch(sandbox.idp.tokenUrl, {
      ...form({ grant_type: 'client_credentials' }),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${basic}`,
      },
    });
    expect(ok.status).toBe(200);
    const refused = await fetch(
      sandbox.idp.tokenUrl,
      form({
        client_id: sandbox.env.AUTH_CLIENT_ID,
        client_secret: 'wrong',
        grant_type: 'client_credentials',
      }),
    );
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('partner API stand-in: what it records', () => {
  it('records calls with their headers and body, and refuses a missing or foreign token', async () => {
    const accessToken = await token();
    expect((await post('/customers/C-1/notifications', accessToken)).status).toBe(200);
    const [call] = sandbox.api.callsFor('/customers/C-1/notifications');
    expect(call).toMatchObject({ method: 'POST', status: 200, body: { hello: 'partner' } });
    expect(call?.headers).toEqual({
      authorization: `Bearer ${accessToken}`,
      'idempotency-key': 'wh_x:notify',
    });
    expect((await post('/customers/C-1/notifications', 'forged')).status).toBe(401);
  });

  it('records the trace context headers a call carried, so a test sees what a caller passes on', async () => {
    const trace = {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=sender',
      baggage: 'user=alice',
    };
    await post('/customers/C-2/notifications', await token(), undefined, trace);
    expect(sandbox.api.callsFor('/customers/C-2/notifications')[0]?.headers).toMatchObject(trace);
  });
});

describe('partner API stand-in: failures on command', () => {
  it('fails on command with Retry-After, then succeeds', async () => {
    const accessToken = await token();
    sandbox.api.failNext({
      path: /^\/quotes\/.+\/price-lock$/,
      status: 503,
      times: 2,
      retryAfter: 7,
    });
    const first = await post('/quotes/Q-1/price-lock', accessToken);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('7');
    expect((await post('/quotes/Q-1/price-lock', accessToken)).status).toBe(503);
    expect((await post('/quotes/Q-1/price-lock', accessToken)).status).toBe(200);
  });

  it('resets connections, and applies a call but answers after the caller gave up, on command', async () => {
    const accessToken = await token();
    sandbox.api.failNext({ path: '/x/resets', status: 0, kind: 'reset' });
    await expect(post('/x/resets', accessToken)).rejects.toThrow();
    sandbox.api.failNext({ path: '/x/late', status: 200, kind: 'timeout', delayMs: 300 });
    const late = fetch(`${sandbox.env.API_BASE_URL}/x/late`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'idempotency-key': 'wh_x:late' },
      signal: AbortSignal.timeout(100),
    });
    await expect(late).rejects.toThrow();
    // The call was applied, and is recorded as answered 200, once its late answer is sent.
    await sandbox.api.waitForCalls((call) => call.path === '/x/late', 1);
    const statuses = sandbox.api.calls
      .filter((call) => call.path.startsWith('/x/'))
      .map((call) => [call.path, call.status]);
    expect(statuses).toEqual([
      ['/x/resets', 0],
      ['/x/late', 200],
    ]);
    expect((await post('/x/resets', accessToken)).status).toBe(200);
  });

  it('fails for good every call whose path or body carries one input, and serves the rest', async () => {
    const accessToken = await token();
    sandbox.api.failNext({ path: /.*/, carrying: 'C-poison', status: 500, times: Infinity });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await post('/customers/C-poison/notifications', accessToken)).status).toBe(500);
        const body = { event: { customer_id: 'C-poison' } };
        expect((await post('/contracts/K-1/documents', accessToken, body)).status).toBe(500);
      }
      expect((await post('/customers/C-healthy/notifications', accessToken)).status).toBe(200);
      const other = { event: { customer_id: 'C-healthy' } };
      expect((await post('/contracts/K-2/documents', accessToken, other)).status).toBe(200);
    } finally {
      sandbox.api.reset();
    }
  });

  it('takes a failure for one input through the control surface', async () => {
    const accessToken = await token();
    const added = await fetch(`${sandbox.env.API_BASE_URL}/__sandbox/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pathPattern: '.*', carrying: 'C-7', status: 503, forSeconds: 60 }),
    });
    expect(added.status).toBe(201);
    try {
      expect((await post('/commissions', accessToken, { customer_id: 'C-7' })).status).toBe(503);
      expect((await post('/commissions', accessToken, { customer_id: 'C-8' })).status).toBe(200);
    } finally {
      sandbox.api.reset();
    }
  });
});

describe('partner API stand-in: waiting, outages and the control surface', () => {
  it('waitForCalls resolves on the call that completes the count', async () => {
    const accessToken = await token();
    const waiting = sandbox.api.waitForCalls((call) => call.path === '/commissions', 2);
    await post('/commissions', accessToken);
    await post('/commissions', accessToken);
    expect(await waiting).toHaveLength(2);
  });

  it('down() refuses connections, up() brings it back', async () => {
    const accessToken = await token();
    await sandbox.api.down();
    await expect(post('/crm/opportunities/S-1', accessToken)).rejects.toThrow();
    await sandbox.api.up();
    expect((await post('/crm/opportunities/S-1', accessToken)).status).toBe(200);
  });

  it('the control surface lists calls without full tokens and takes failures', async () => {
    const accessToken = await token();
    const control = `${sandbox.env.API_BASE_URL}/__sandbox`;
    const added = await fetch(`${control}/failures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/metrics/conversions', status: 500 }),
    });
    expect(added.status).toBe(201);
    expect((await post('/metrics/conversions', accessToken)).status).toBe(500);
    const listing = await (await fetch(`${control}/calls`)).text();
    expect(listing).toContain('/metrics/conversions');
    expect(listing).not.toContain(accessToken);
    expect(listing).toContain(`Bearer …${accessToken.slice(-6)}`);
  });

  it('the control surface holds calls in flight, says how many, and answers them when told', async () => {
    const accessToken = await token();
    const holds = `${sandbox.env.API_BASE_URL}/__sandbox/holds`;
    const control = (method: string, body?: unknown) =>
      fetch(holds, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const holding = async () =>
      ((await (await control('GET')).json()) as { holding: number }).holding;
    expect((await control('POST', { pathPattern: '^/quotes/Q-held/' })).status).toBe(201);
    const held = post('/quotes/Q-held/price-lock', accessToken);
    await expect.poll(holding).toBe(1);
    // Other paths are answered meanwhile.
    expect((await post('/quotes/Q-free/price-lock', accessToken)).status).toBe(200);
    expect((await control('DELETE')).status).toBe(200);
    expect((await held).status).toBe(200);
    expect(await holding()).toBe(0);
    expect((await post('/quotes/Q-held/price-lock', accessToken)).status).toBe(200);
  });

  it('the control surface refuses a path pattern that is no regular expression, and keeps serving', async () => {
    const control = `${sandbox.env.API_BASE_URL}/__sandbox`;
    for (const [what, body] of [
      ['failures', { pathPattern: '(', status: 500 }],
      ['holds', { pathPattern: '[' }],
      ['holds', {}],
    ] as const) {
      const refused = await fetch(`${control}/${what}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(refused.status).toBe(400);
    }
    expect((await fetch(`${control}/health`)).status).toBe(200);
  });
});

describe('partner API stand-in health and host', () => {
  // An address of this machine other than loopback, to tell which interfaces a server listens on.
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
  const health = (host: string, api: PartnerApiStandIn) =>
    fetch(`http://${host}:${new URL(api.baseUrl).port}/__sandbox/health`);

  it('answers GET /__sandbox/health with 200, without a token and without recording it', async () => {
    const answer = await fetch(`${sandbox.env.API_BASE_URL}/__sandbox/health`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true });
    expect(sandbox.api.callsFor('/__sandbox/health')).toEqual([]);
  });

  it.skipIf(!external)('listens on loopback only by default', async () => {
    const api = await PartnerApiStandIn.start();
    try {
      expect(api.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await health('127.0.0.1', api)).status).toBe(200);
      await expect(health(external!, api)).rejects.toThrow();
    } finally {
      await api.stop();
    }
  });

  it.skipIf(!external)(
    'with host 0.0.0.0 listens on every interface, after down() and up() too',
    async () => {
      const api = await PartnerApiStandIn.start({ host: '0.0.0.0' });
      try {
        // Still a loopback URL for callers on this machine.
        expect(api.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect((await health(external!, api)).status).toBe(200);
        await api.down();
        await expect(health(external!, api)).rejects.toThrow();
        await api.up();
        expect((await health(external!, api)).status).toBe(200);
      } finally {
        await api.stop();
      }
    },
  );
});
