// The compose `partner-api` service: deploy/partner-api/main.ts (the image's bundle, run here from
// its source) listening on every interface. Its compose and Dockerfile health checks pass against
// it and fail when it does not answer 200, and a worker and an ingress with the compose settings
// (the sandbox's identity provider standing in for Keycloak) process an event end to end through it.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { loadCompose } from '../src/compose.js';
import { dockerfileHealthcheck, runHealthCheck } from '../src/health-check.js';

/** A call as GET /__sandbox/calls lists it. */
interface ListedCall {
  path: string;
  status: number;
  headers: { authorization?: string };
}

const { compose } = loadCompose();
const healthChecks = {
  compose: compose.services['partner-api']!.healthcheck!.test.slice(1),
  Dockerfile: dockerfileHealthcheck('partner-api'),
};
// An address of this machine other than loopback, to tell which interfaces the stand-in is on.
const external = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === 'IPv4' && !address.internal)?.address;

const prefix = uniquePrefix();
const runs: ChildRun[] = [];
let standIn: ChildRun;
let port: number;
let idp: IdentityProvider | undefined;
const url = (path: string, host = '127.0.0.1') => `http://${host}:${port}${path}`;

beforeAll(async () => {
  port = await freePort();
  // The variable the image reads; compose leaves it unset in the container (3011).
  standIn = ChildRun.tsx('deploy/partner-api/main.ts', { SANDBOX_API_PORT: String(port) });
  runs.push(standIn);
  await standIn.printed('partner API stand-in listening');
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  await idp?.stop();
  const redis = new Redis(testRedisUrl());
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

const listCalls = async () => (await (await fetch(url('/__sandbox/calls'))).json()) as ListedCall[];

/** Polls the stand-in's listing until `count` calls after the first `skip` answered 200. */
async function waitForCalls(skip: number, count: number, timeoutMs: number): Promise<ListedCall[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const calls = (await listCalls()).slice(skip).filter((call) => call.status === 200);
    if (calls.length >= count) return calls;
    if (Date.now() > deadline)
      throw new Error(`expected ${count} calls in ${timeoutMs} ms; seen ${JSON.stringify(calls)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Starts an ingress and a worker with the compose settings, the sandbox's identity provider
 * standing in for Keycloak and the stand-in here for `partner-api`; answers the ingress's port.
 */
async function startComposeApps(): Promise<number> {
  const worker = compose.services.worker!.environment!;
  idp = await startIdentityProvider({
    realm: worker.AUTH_REALM,
    clients: [{ clientId: worker.AUTH_CLIENT_ID!, clientSecret: worker.AUTH_CLIENT_SECRET! }],
  });
  const ingressPort = await freePort();
  const common = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };
  const ingressRun = ChildRun.tsx('apps/ingress/src/main.ts', {
    ...compose.services.ingress!.environment!,
    ...common,
    INGRESS_PORT: String(ingressPort),
    WEBHOOK_SECRETS: TEST_SECRET,
  });
  const workerRun = ChildRun.tsx('apps/worker/src/main.ts', {
    ...worker,
    ...common,
    WORKER_HEALTH_PORT: String(await freePort()),
    // Keycloak and the stand-in by their addresses here instead of their compose names.
    AUTH_URL: idp.baseUrl,
    API_BASE_URL: worker.API_BASE_URL!.replace('partner-api:3011', `127.0.0.1:${port}`),
  });
  runs.push(ingressRun, workerRun);
  await Promise.all([ingressRun.printed('ingress listening'), workerRun.printed('worker running')]);
  return ingressPort;
}

describe('the partner-API stand-in service', { timeout: 90_000 }, () => {
  it.skipIf(!external)('listens on every interface, not only loopback', async () => {
    const answer = await fetch(url('/quotes/Q-1/price-lock', external), {
      method: 'POST',
      headers: { authorization: 'Bearer any-token', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(200);
  });

  it('refuses a call without a bearer token and takes any bearer token (Keycloak issues them)', async () => {
    expect((await fetch(url('/commissions'), { method: 'POST' })).status).toBe(401);
    const answer = await fetch(url('/commissions'), {
      method: 'POST',
      headers: { authorization: 'Bearer not-from-the-sandbox' },
    });
    expect(answer.status).toBe(200);
  });

  it('passes its compose and Dockerfile health checks, which ask GET /__sandbox/health', async () => {
    for (const [file, command] of Object.entries(healthChecks)) {
      expect(command.join(' '), file).toContain('/__sandbox/health');
      expect(await runHealthCheck(command, { SANDBOX_API_PORT: String(port) }), file).toBe(0);
    }
    expect((await fetch(url('/__sandbox/health'))).status).toBe(200);
  });

  it('health checks fail when nothing answers, or when the answer is not 200', async () => {
    const closed = { SANDBOX_API_PORT: String(await freePort()) };
    const notFound = createServer((_req, res) => res.writeHead(404).end());
    notFound.listen(0, '127.0.0.1');
    await once(notFound, 'listening');
    const answering404 = { SANDBOX_API_PORT: String((notFound.address() as AddressInfo).port) };
    try {
      for (const [file, command] of Object.entries(healthChecks)) {
        expect(await runHealthCheck(command, closed), `${file}, nothing answering`).toBe(1);
        expect(await runHealthCheck(command, answering404), `${file}, 404`).toBe(1);
      }
    } finally {
      notFound.close();
    }
  });

  it('receives the actions of an event sent to an ingress and worker with the compose settings', async () => {
    const ingressPort = await startComposeApps();

    const before = (await listCalls()).length;
    const answer = await fetch(`http://127.0.0.1:${ingressPort}/webhooks/quote-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedEvent('quote', { status: 'approved' })),
    });
    expect(answer.status).toBe(200);
    const calls = await waitForCalls(before, 3, 30_000);
    expect(calls.map((call) => call.path)).toEqual(
      expect.arrayContaining([expect.stringMatching(/\/price-lock$/)]),
    );
    // The listing shows a token by its end only.
    for (const call of calls) expect(call.headers.authorization).toMatch(/^Bearer …\S+/);
  });

  it('stops on SIGTERM (exit code 0), and its health checks then fail', async () => {
    expect(await standIn.stop('SIGTERM')).toBe(0);
    expect(await runHealthCheck(healthChecks.Dockerfile, { SANDBOX_API_PORT: String(port) })).toBe(
      1,
    );
  });
});
