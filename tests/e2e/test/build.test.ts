// `npm run build`: the apps as plain JavaScript, run with `node` and no TypeScript at run time.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { OutcomeStore } from '@pw/shared/outcomes';
import { startSandbox } from '@pw/sandbox';
import type { Sandbox } from '@pw/sandbox';
import {
  ChildRun,
  deleteKeys,
  freePort,
  signedEvent,
  testRedisUrl,
  TEST_SECRET,
  uniquePrefix,
} from '@pw/test-utils';

const prefix = uniquePrefix();
let sandbox: Sandbox;
const runs: ChildRun[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ idpPort: 0, apiPort: 0 });
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  await sandbox.stop();
  const redis = new Redis(testRedisUrl());
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('npm run build', { timeout: 60_000 }, () => {
  it('builds apps/*/dist/main.js, which run with plain node and process an event end to end', async () => {
    const build = ChildRun.start(['npm', 'run', '-s', 'build'], {});
    expect(await build.exited).toBe(0);
    const port = await freePort();
    const env = {
      ...sandbox.env,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      INGRESS_PORT: String(port),
      WORKER_HEALTH_PORT: String(await freePort()),
      WEBHOOK_SECRETS: TEST_SECRET,
      LOG_LEVEL: 'info',
    };
    const ingress = ChildRun.start([process.execPath, 'apps/ingress/dist/main.js'], env);
    const worker = ChildRun.start([process.execPath, 'apps/worker/dist/main.js'], env);
    runs.push(ingress, worker);
    await Promise.all([ingress.printed('ingress listening'), worker.printed('worker running')]);

    const answer = await fetch(`http://127.0.0.1:${port}/webhooks/contract-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedEvent('contract', { status: 'active' })),
    });
    expect(answer.status).toBe(200);
    const ack = acknowledgementSchema.parse(await answer.json());
    const redis = new Redis(testRedisUrl());
    const subscriber = redis.duplicate();
    try {
      const outcome = await new OutcomeStore(redis, {
        queuePrefix: prefix,
        recordTtlSeconds: 600,
      }).waitUntilFinished(ack.webhook_id, subscriber, { timeoutMs: 20_000 });
      expect(outcome.state).toBe('completed');
      expect(outcome.actions).toHaveLength(4);
    } finally {
      subscriber.disconnect();
      redis.disconnect();
    }
    expect(await ingress.stop('SIGTERM')).toBe(0);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('the built ingress serves its API document and the built dashboard renders it from node_modules', async () => {
    const ingressPort = await freePort();
    const dashboardPort = await freePort();
    const env = {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      INGRESS_PORT: String(ingressPort),
      DASHBOARD_PORT: String(dashboardPort),
      DASHBOARD_USER: 'operator',
      DASHBOARD_PASSWORD: 'built-dashboard',
      LOG_LEVEL: 'info',
    };
    const ingress = ChildRun.start([process.execPath, 'apps/ingress/dist/main.js'], env);
    const dashboard = ChildRun.start([process.execPath, 'apps/dashboard/dist/main.js'], env);
    runs.push(ingress, dashboard);
    await Promise.all([
      ingress.printed('ingress listening'),
      dashboard.printed('dashboard listening'),
    ]);
    const served = (await (await fetch(`http://127.0.0.1:${ingressPort}/openapi.json`)).json()) as {
      openapi: string;
    };
    expect(served.openapi).toBe('3.1.0');
    const authorization = `Basic ${Buffer.from('operator:built-dashboard').toString('base64')}`;
    for (const asset of ['', 'init.js', 'swagger-ui-bundle.js', 'swagger-ui.css', 'openapi.json']) {
      const answer = await fetch(`http://127.0.0.1:${dashboardPort}/docs/${asset}`, {
        headers: { authorization },
      });
      expect(answer.status, `/docs/${asset}`).toBe(200);
    }
    expect(await ingress.stop('SIGTERM')).toBe(0);
    expect(await dashboard.stop('SIGTERM')).toBe(0);
  });
});
