// deploy/healthcheck.mjs, the health check of every image and compose service, run with node as
// Docker runs it (from the images' /app, here the repository root) against a real HTTP server on an
// ephemeral port: 2xx is healthy, anything else, no answer or a bad port is not, and the port comes
// from the variable the command names.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@pw/test-utils';
import { parseStages } from '../src/dockerfile.js';
import {
  dockerfileHealthcheckCommand,
  HEALTHCHECK_SCRIPT,
  runHealthCheck,
} from '../src/health-check.js';
import { imageEnvironment } from '../src/image-layout.js';
import { readRepoFile } from '../src/repo.js';

/** A variable nothing else sets, so "unset" means unset. */
const VARIABLE = 'PW_HEALTHCHECK_TEST_PORT';

const requests: string[] = [];
/** `/status/NNN` answers NNN, `/hang` never answers, any other path 200. */
const server = createServer((request, response) => {
  const path = request.url ?? '';
  requests.push(path);
  if (path === '/hang') return;
  response.writeHead(Number(/^\/status\/(\d{3})$/.exec(path)?.[1] ?? 200)).end();
});
let port: string;
let closed: string;

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = String((server.address() as AddressInfo).port);
  closed = String(await freePort());
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

/** Runs `node deploy/healthcheck.mjs VARIABLE fallback path` with `env`; resolves with its exit code. */
const check = (fallback: string, path: string, env: Record<string, string> = {}) =>
  runHealthCheck(['node', HEALTHCHECK_SCRIPT, VARIABLE, fallback, path], env);

describe('deploy/healthcheck.mjs', () => {
  it('exits 0 on a 200 from http://127.0.0.1:<port><path>', async () => {
    expect(await check(closed, '/status/200', { [VARIABLE]: port })).toBe(0);
    expect(requests.at(-1)).toBe('/status/200');
  });

  it('exits 0 on any 2xx', async () => {
    expect(await check(closed, '/status/204', { [VARIABLE]: port })).toBe(0);
  });

  it('exits 1 on a 503 (or a 404)', async () => {
    expect(await check(closed, '/status/503', { [VARIABLE]: port })).toBe(1);
    expect(requests.at(-1)).toBe('/status/503');
    expect(await check(closed, '/status/404', { [VARIABLE]: port })).toBe(1);
  });

  it('exits 1 when nothing listens on the port', async () => {
    expect(await check(port, '/status/200', { [VARIABLE]: closed })).toBe(1);
  });

  it('takes the port from the named variable, the default port when it is unset or empty', async () => {
    expect(await check(closed, '/from-variable', { [VARIABLE]: port })).toBe(0);
    expect(requests.at(-1)).toBe('/from-variable');
    expect(await check(port, '/from-default')).toBe(0);
    expect(requests.at(-1)).toBe('/from-default');
    expect(await check(port, '/from-empty', { [VARIABLE]: '' })).toBe(0);
    expect(requests.at(-1)).toBe('/from-empty');
  });

  it('exits 1 without a request on a port that is not a number, or on missing arguments', async () => {
    const before = requests.length;
    expect(await check(port, '/status/200', { [VARIABLE]: 'http' })).toBe(1);
    expect(await check(port, '/status/200', { [VARIABLE]: `${port}/x` })).toBe(1);
    expect(await check('3000x', '/status/200')).toBe(1);
    expect(await check(port, '/status/200', { [VARIABLE]: '70000' })).toBe(1);
    expect(await runHealthCheck(['node', HEALTHCHECK_SCRIPT, VARIABLE, port], {})).toBe(1);
    expect(await runHealthCheck(['node', HEALTHCHECK_SCRIPT], {})).toBe(1);
    expect(requests.length).toBe(before);
  });

  it('gives up after 4 s on a server that does not answer (Docker allows the check 5 s)', async () => {
    const started = Date.now();
    expect(await check(closed, '/hang', { [VARIABLE]: port })).toBe(1);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(3_900);
    // Its own timeout, not runHealthCheck's kill at 10 s.
    expect(elapsed).toBeLessThan(9_000);
  });
});

describe('deploy/healthcheck.mjs without arguments', () => {
  it('without arguments, takes them from HEALTHCHECK_PORT_VARIABLE, HEALTHCHECK_DEFAULT_PORT and HEALTHCHECK_PATH', async () => {
    const from = (fallback: string, path: string) => ({
      HEALTHCHECK_PORT_VARIABLE: VARIABLE,
      HEALTHCHECK_DEFAULT_PORT: fallback,
      HEALTHCHECK_PATH: path,
    });
    const bare = ['node', HEALTHCHECK_SCRIPT];
    expect(await runHealthCheck(bare, { ...from(closed, '/env-variable'), [VARIABLE]: port })).toBe(
      0,
    );
    expect(requests.at(-1)).toBe('/env-variable');
    expect(await runHealthCheck(bare, from(port, '/env-default'))).toBe(0);
    expect(requests.at(-1)).toBe('/env-default');
    expect(await runHealthCheck(bare, from(closed, '/status/200'))).toBe(1);
    const before = requests.length;
    expect(await runHealthCheck(bare, { ...from(port, '/x'), HEALTHCHECK_PATH: '' })).toBe(1);
    expect(await runHealthCheck(bare, { ...from(port, 'no-slash') })).toBe(1);
    expect(requests.length).toBe(before);
  });
});

// The Dockerfile's own commands, as written and in their image's environment, reach the server
// through their port variable and ask their path.
describe("the images' HEALTHCHECK", () => {
  const stages = parseStages(readRepoFile('Dockerfile'));
  for (const [target, variable, path] of [
    ['ingress', 'INGRESS_PORT', '/healthz'],
    ['worker', 'WORKER_HEALTH_PORT', '/healthz'],
    ['recorder', 'RECORDER_HEALTH_PORT', '/healthz'],
    ['dashboard', 'DASHBOARD_PORT', '/healthz'],
    ['partner-api', 'SANDBOX_API_PORT', '/__sandbox/health'],
  ] as const) {
    it(`the ${target} image's HEALTHCHECK asks ${path} on ${variable}`, async () => {
      const env = { ...imageEnvironment(stages, target), [variable]: port };
      expect(await runHealthCheck(dockerfileHealthcheckCommand(target), env)).toBe(0);
      expect(requests.at(-1)).toBe(path);
    });
  }
});
