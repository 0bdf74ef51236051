// The apps started with the settings docker-compose.yml and deploy/k8s give them (ports moved to
// free ones, Redis the tests' own) answer the health checks and probes those files declare: the
// paths, the port variables and the health-check commands are the real ones, and the k8s
// ConfigMap and Secret (its placeholders replaced) pass the apps' production validation. The
// recorder and the dashboard get the tests' PostgreSQL (a schema of this file's own) in place of
// the files' DATABASE_URL: the recorder answers its health check only once the store is migrated.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChildRun,
  deleteKeys,
  freePort,
  testRedisUrl,
  testSchema,
  uniquePrefix,
} from '@pw/test-utils';
import type { TestSchema } from '@pw/test-utils';
import { loadCompose } from '../src/compose.js';
import { APP_PORTS } from '../src/contract.js';
import type { App } from '../src/contract.js';
import { dockerfileHealthcheck, runHealthCheck } from '../src/health-check.js';
import { loadManifests } from '../src/kubernetes.js';
import type { Manifest } from '../src/kubernetes.js';
import { schemaDatabaseUrl } from '../src/postgres.js';

const APPS = APP_PORTS;

const prefix = uniquePrefix();
const runs: ChildRun[] = [];
let schema: TestSchema;
beforeAll(async () => {
  schema = await testSchema();
});
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  const redis = new Redis(testRedisUrl());
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await schema?.drop();
});

/** Starts the app with `env` and resolves once `path` answers 200 on `port`. */
async function startApp(app: App, env: Record<string, string>, port: number, path: string) {
  const run = ChildRun.tsx(`apps/${app}/src/main.ts`, env);
  runs.push(run);
  const deadline = Date.now() + 45_000;
  for (;;) {
    const code = run.child.exitCode;
    if (code !== null) throw new Error(`${app} exited (${code}):\n${run.output}`);
    const answer = await fetch(`http://127.0.0.1:${port}${path}`).catch(() => undefined);
    if (answer?.status === 200) return run;
    if (Date.now() > deadline) throw new Error(`${app} never answered ${path}:\n${run.output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const overrides = async (app: App) => {
  const port = await freePort();
  return {
    port,
    env: {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      DATABASE_URL: schemaDatabaseUrl(schema),
      [APPS[app]]: String(port),
    },
  };
};

describe('with the docker-compose.yml environment', { timeout: 90_000 }, () => {
  const { compose } = loadCompose();
  for (const app of Object.keys(APPS) as App[]) {
    it(`${app} passes its compose and Dockerfile health checks`, async () => {
      const { port, env } = await overrides(app);
      await startApp(app, { ...compose.services[app]!.environment!, ...env }, port, '/healthz');
      const checkEnv = { [APPS[app]]: String(port) };
      const composeCheck = compose.services[app]!.healthcheck!.test.slice(1);
      expect(await runHealthCheck(composeCheck, checkEnv)).toBe(0);
      expect(await runHealthCheck(dockerfileHealthcheck(app), checkEnv)).toBe(0);
    });
  }

  it('health checks fail when nothing answers', async () => {
    const closed = { INGRESS_PORT: String(await freePort()) };
    expect(await runHealthCheck(dockerfileHealthcheck('ingress'), closed)).toBe(1);
  });
});

describe(
  'with the deploy/k8s ConfigMap and example Secret (NODE_ENV=production)',
  { timeout: 90_000 },
  () => {
    const manifests = loadManifests();
    const configMap = manifests.find((m) => m.kind === 'ConfigMap') as Manifest & {
      data: Record<string, string>;
    };
    const secret = manifests.find((m) => m.kind === 'Secret') as Manifest & {
      stringData: Record<string, string>;
    };
    for (const app of Object.keys(APPS) as App[]) {
      it(`${app} starts and answers its liveness and readiness probes`, async () => {
        const deployment = manifests.find(
          (m) => m.kind === 'Deployment' && m.metadata.name === `partner-webhooks-${app}`,
        ) as unknown as {
          spec: {
            template: {
              spec: {
                containers: {
                  env: { name: string; valueFrom: { secretKeyRef: { key: string } } }[];
                  livenessProbe: { httpGet: { path: string } };
                  readinessProbe: { httpGet: { path: string } };
                }[];
              };
            };
          };
        };
        const container = deployment.spec.template.spec.containers[0]!;
        const fromSecret = Object.fromEntries(
          container.env.map((variable) => [
            variable.name,
            secret.stringData[variable.valueFrom.secretKeyRef.key]!,
          ]),
        );
        // The example's `change-me` placeholders are too weak for production (a signing secret
        // under 32 bytes stops the ingress, a password under 16 characters the dashboard): stand
        // in real values, as an operator would.
        for (const [name, value] of Object.entries(fromSecret)) {
          if (value === 'change-me') fromSecret[name] = randomBytes(32).toString('hex');
        }
        const { port, env } = await overrides(app);
        const liveness = container.livenessProbe.httpGet.path;
        await startApp(app, { ...configMap.data, ...fromSecret, ...env }, port, liveness);
        // Alive as soon as it listens; ready once it takes work (the worker: once it found the
        // partition count and started its consumers). Kubernetes asks again until it is.
        const readiness = `http://127.0.0.1:${port}${container.readinessProbe.httpGet.path}`;
        await expect
          .poll(async () => (await fetch(readiness)).status, { timeout: 15_000, interval: 200 })
          .toBe(200);
      });
    }

    it("the dashboard refuses the example's placeholder password, saying how long it must be", async () => {
      const run = ChildRun.tsx('apps/dashboard/src/main.ts', {
        ...configMap.data,
        DASHBOARD_USER: secret.stringData.DASHBOARD_USER!,
        DASHBOARD_PASSWORD: secret.stringData.DASHBOARD_PASSWORD!,
        ...(await overrides('dashboard')).env,
      });
      runs.push(run);
      expect(await run.exited).toBe(1);
      expect(run.output.trim().split('\n')).toEqual([
        'dashboard: Invalid configuration:',
        '  - DASHBOARD_PASSWORD: is 9 characters long; production needs at least 16',
      ]);
    });
  },
);
