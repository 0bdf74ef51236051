// The app images, checked without Docker: `npm run build` (as the build stage runs it), then each
// app target's files laid out in a folder of their own as the Dockerfile copies them into /app,
// and the target's CMD run from there with plain node, the image's ENV and the docker-compose.yml
// settings. Each must answer its image's HEALTHCHECK. The recorder answers only once it has opened
// and migrated the record store, and must have applied every SQL migration of @pw/records from the
// image's copy of them (a bundle reads them relative to itself, not from packages/).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
import { parseStages } from '../src/dockerfile.js';
import { dockerfileHealthcheckCommand, runHealthCheck } from '../src/health-check.js';
import { buildOutputs, imageEnvironment, layOutImage } from '../src/image-layout.js';
import { schemaDatabaseUrl } from '../src/postgres.js';
import { readRepoFile, repoFileExists, repoPath } from '../src/repo.js';

const APPS = APP_PORTS;
const MIGRATIONS = 'packages/records/migrations';

const stages = parseStages(readRepoFile('Dockerfile'));
const { compose } = loadCompose();
const prefix = uniquePrefix();
const runs: ChildRun[] = [];
const folders: string[] = [];
let schema: TestSchema;
/** Before the build started; file times may be coarser than the clock. */
let builtAfter: number;
/** The exit code and output of each of the two builds started at once. */
let buildResults: { code: number | null; output: string }[] = [];

beforeAll(async () => {
  schema = await testSchema();
  builtAfter = Date.now() - 2_000;
  // Two builds at once, as when the bench and a test suite each build: both must finish whole.
  const builds = [0, 1].map(() => ChildRun.start(['npm', 'run', '-s', 'build'], {}));
  buildResults = await Promise.all(
    builds.map(async (build) => ({ code: await build.exited, output: build.output })),
  );
}, 120_000);
afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  const redis = new Redis(testRedisUrl());
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await schema?.drop();
});

/** The latest modification time of a file, or of any file in a folder. */
const newest = (path: string): number => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
};

/** Runs the target's CMD from `folder` and resolves once `/healthz` answers 200 on `port`. */
async function startImage(app: App, folder: string, env: Record<string, string>, port: number) {
  const cmd = stages
    .find((stage) => stage.name === app)!
    .instructions.findLast(({ keyword }) => keyword === 'CMD')?.exec;
  const [file, ...args] = cmd ?? [];
  if (file !== 'node')
    throw new Error(`the ${app} target's CMD does not run node: ${cmd?.join(' ')}`);
  const child = spawn(process.execPath, args, {
    cwd: folder,
    env: { ...process.env, ...env },
    detached: true,
    stdio: 'pipe',
  });
  const run = new ChildRun(child, { name: app });
  runs.push(run);
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (run.child.exitCode !== null)
      throw new Error(`${app} exited (${run.child.exitCode}):\n${run.output}`);
    const answer = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (answer?.status === 200) return run;
    if (Date.now() > deadline) throw new Error(`${app} never answered /healthz:\n${run.output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the app images, laid out as the Dockerfile copies them', { timeout: 90_000 }, () => {
  it('builds twice at once without either build failing', () => {
    for (const { code, output } of buildResults) expect(code, output).toBe(0);
  });

  it('covers every app target of the Dockerfile', () => {
    const targets = stages.filter((stage) => stage.from === 'runtime').map((stage) => stage.name);
    expect(targets.sort()).toEqual(Object.keys(APPS).sort());
  });

  for (const app of Object.keys(APPS) as App[]) {
    it(`${app}: npm run build writes what the image copies from the build stage`, () => {
      const outputs = buildOutputs(stages, app);
      expect(outputs).toContain(`apps/${app}/dist`);
      for (const output of outputs) {
        expect(repoFileExists(output), `npm run build wrote ${output}`).toBe(true);
        expect(newest(repoPath(output)), `npm run build wrote ${output} now`).toBeGreaterThan(
          builtAfter,
        );
      }
    });

    it(`${app}: the image's files alone start with node and pass its HEALTHCHECK`, async () => {
      const folder = mkdtempSync(join(tmpdir(), `pw-image-${app}-`));
      folders.push(folder);
      layOutImage(stages, app, folder);
      const port = await freePort();
      const env = {
        ...imageEnvironment(stages, app),
        ...compose.services[app]!.environment,
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: prefix,
        [APPS[app]]: String(port),
        ...(app === 'recorder' || app === 'dashboard'
          ? { DATABASE_URL: schemaDatabaseUrl(schema) }
          : {}),
      };
      await startImage(app, folder, env, port);
      // As Docker runs it: the command as written, in the container's environment.
      expect(await runHealthCheck(dockerfileHealthcheckCommand(app), env, folder)).toBe(0);

      if (app === 'recorder') {
        // Asked with the image's own pg: the versions the recorder applied.
        const query = `import pg from 'pg';
          const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
          await client.connect();
          const { rows } = await client.query('select version from schema_migrations');
          console.log(JSON.stringify(rows.map((row) => row.version).sort()));
          await client.end();`;
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ['--input-type=module', '-e', query],
          { cwd: folder, env: { ...process.env, DATABASE_URL: env.DATABASE_URL! } },
        );
        const shipped = readdirSync(repoPath(MIGRATIONS))
          .filter((name) => name.endsWith('.sql'))
          .map((name) => name.slice(0, -'.sql'.length))
          .sort();
        expect(shipped.length).toBeGreaterThan(0);
        expect(JSON.parse(stdout)).toEqual(shipped);
      }
    });
  }
});
