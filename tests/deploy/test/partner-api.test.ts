// The compose `partner-api` service: the sandbox's stand-in behind a relay on every interface.
// A worker and an ingress with the compose settings (the sandbox's identity provider standing in
// for Keycloak) process an event end to end through it.
import { networkInterfaces } from 'node:os';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentityProvider } from '@pw/sandbox';
import type { IdentityProvider } from '@pw/sandbox';
import {
  ChildRun,
  deleteKeys,
  freePort,
  signedEvent,
  testRedisUrl,
  TEST_SECRET,
  uniquePrefix,
} from '@pw/test-utils';
import { startPartnerApiServer } from '../../../deploy/partner-api/partner-api-server.js';
import type { PartnerApiServer } from '../../../deploy/partner-api/partner-api-server.js';
import { loadCompose } from '../src/compose.js';

const prefix = uniquePrefix();
const runs: ChildRun[] = [];
let server: PartnerApiServer;
let idp: IdentityProvider;

beforeAll(async () => {
  server = await startPartnerApiServer({ port: 0 });
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  await server.stop();
  await idp?.stop();
  const redis = new Redis(testRedisUrl());
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('the partner-API stand-in service', () => {
  it('listens on every interface, not only loopback', async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal);
    const host = external?.address ?? '127.0.0.1';
    const answer = await fetch(`http://${host}:${server.port}/quotes/Q-1/price-lock`, {
      method: 'POST',
      headers: { authorization: 'Bearer any-token', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(200);
  });

  it('refuses a call without a bearer token', async () => {
    const answer = await fetch(`http://127.0.0.1:${server.port}/commissions`, { method: 'POST' });
    expect(answer.status).toBe(401);
  });

  it('receives the actions of an event sent to an ingress and worker with the compose settings', async () => {
    server.api.reset();
    const { compose } = loadCompose();
    const realm = compose.services.worker!.environment!;
    idp = await startIdentityProvider({
      realm: realm.AUTH_REALM,
      clients: [{ clientId: realm.AUTH_CLIENT_ID!, clientSecret: realm.AUTH_CLIENT_SECRET! }],
    });
    const ingressPort = await freePort();
    const common = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };
    const ingress = ChildRun.tsx('apps/ingress/src/main.ts', {
      ...compose.services.ingress!.environment!,
      ...common,
      INGRESS_PORT: String(ingressPort),
      WEBHOOK_SECRETS: TEST_SECRET,
    });
    const worker = ChildRun.tsx('apps/worker/src/main.ts', {
      ...compose.services.worker!.environment!,
      ...common,
      WORKER_HEALTH_PORT: String(await freePort()),
      // Keycloak and the stand-in by their addresses here instead of their compose names.
      AUTH_URL: idp.baseUrl,
      API_BASE_URL: realm.API_BASE_URL!.replace('partner-api:3011', `127.0.0.1:${server.port}`),
    });
    runs.push(ingress, worker);
    await Promise.all([ingress.printed('ingress listening'), worker.printed('worker running')]);

    const answer = await fetch(`http://127.0.0.1:${ingressPort}/webhooks/quote-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedEvent('quote', { status: 'approved' })),
    });
    expect(answer.status).toBe(200);
    const calls = await server.api.waitForCalls((call) => call.status === 200, 3, 30_000);
    expect(calls.map((call) => call.path).sort()).toEqual(
      expect.arrayContaining([expect.stringMatching(/\/price-lock$/)]),
    );
    for (const call of calls) expect(call.headers.authorization).toMatch(/^Bearer \S+/);
  });
});
