import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { waitForRedis } from './redis-probe.js';

/** The image of npm start's Redis container where no redis-server can be had. */
export const REDIS_IMAGE = 'redis:7-alpine';

/** Runs `docker …`: its output when it succeeded; else it throws with its last error line. */
export type DockerCli = (args: readonly string[], timeoutMs?: number) => string;

/** The `docker` command; by default it may take minutes, as an image pull does. */
export const dockerCli: DockerCli = (args, timeoutMs = 600_000) => {
  const result = spawnSync('docker', args, { encoding: 'utf8', timeout: timeoutMs });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    const said = result.stderr.trim().split('\n').at(-1);
    throw new Error(`docker ${args[0]} exited with ${result.status ?? result.signal}: ${said}`);
  }
  return result.stdout.trim();
};

/** Whether a Docker engine answers within 10 s: a `docker` command without one is not enough. */
export function dockerAnswers(docker: DockerCli = dockerCli): boolean {
  try {
    docker(['info', '--format', '{{.ServerVersion}}'], 10_000);
    return true;
  } catch {
    return false;
  }
}

export interface RedisContainerOptions {
  /** Published on 127.0.0.1 at this port. */
  port: number;
  /** Its data folder on this machine, mounted at the image's `/data`. */
  dir: string;
  /** `uid:gid` it runs as, so that its files in `dir` are the user's. */
  user: string;
}

/** `docker run` arguments for a Redis with the append-only file on and RDB snapshots off. */
export const redisContainerArgs = (options: RedisContainerOptions): string[] => [
  'run',
  '--detach',
  '--rm',
  '--user',
  options.user,
  '--publish',
  `127.0.0.1:${options.port}:6379`,
  '--volume',
  `${options.dir}:/data`,
  REDIS_IMAGE,
  ...['redis-server', '--appendonly', 'yes', '--save', ''],
];

/** Starts a Redis container and waits until it answers; `stop()` stops and removes it. */
export async function startRedisContainer(
  options: RedisContainerOptions,
  docker: DockerCli = dockerCli,
): Promise<{ url: string; stop: () => Promise<void> }> {
  await mkdir(options.dir, { recursive: true });
  const id = docker(redisContainerArgs(options));
  const stop = () => {
    docker(['stop', id]);
    return Promise.resolve();
  };
  try {
    await waitForRedis('127.0.0.1', options.port, 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${options.port}`, stop };
}
