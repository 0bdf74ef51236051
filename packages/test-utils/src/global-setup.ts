import type { TestProject } from 'vitest/node';
import { dockerReachable } from './docker.js';
import { findOnPath } from './find-program.js';
import { PrivateRedis } from './redis-server.js';
import './test-redis.js';

/**
 * Gives every test run a Redis: `REDIS_URL` when set, else a testcontainers Redis when a Docker
 * engine answers, else a private `redis-server` from the PATH; with none of these, one clear line.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    return async () => {};
  }
  if (dockerReachable()) {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('redis:7-alpine')
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
      .start();
    project.provide('redisUrl', `redis://${container.getHost()}:${container.getMappedPort(6379)}`);
    return async () => {
      await container.stop();
    };
  }
  if (findOnPath('redis-server', process.env.PATH)) {
    const redis = await PrivateRedis.start();
    project.provide('redisUrl', redis.url);
    return () => redis.destroy();
  }
  throw new Error(
    'No Redis for the tests: set REDIS_URL, start a Docker engine, or put redis-server on the PATH.',
  );
}
