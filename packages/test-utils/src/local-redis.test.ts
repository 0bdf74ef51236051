import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalRedisError, startLocalRedis } from './local-redis.js';
import type { LocalRedis, LocalRedisOptions } from './local-redis.js';
import { dockerAnswers, redisContainerArgs } from './redis-container.js';
import { redisAnswers } from './redis-probe.js';
import { freePort } from './redis-server.js';
import { testRedisUrl } from './test-redis.js';

const started: LocalRedis[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((redis) => redis.stop()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function options(extra: Partial<LocalRedisOptions> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'pw-local-redis-'));
  dirs.push(dir);
  const said: string[] = [];
  const ran: string[] = [];
  const value: LocalRedisOptions = {
    port: await freePort(),
    dir: join(dir, 'data'),
    run: (command, args) => void ran.push([command, ...args].join(' ')),
    docker: () => {
      throw new Error('docker run exited with 125: Cannot connect to the Docker daemon');
    },
    say: (line) => said.push(line),
    ...extra,
  };
  return { value, said, ran };
}

describe('startLocalRedis', () => {
  it('starts a redis-server on the port with the append-only file in the folder, and stops it', async () => {
    const o = await options();
    const redis = await startLocalRedis(['redis-server'], o.value);
    started.push(redis);
    expect(redis.url).toBe(`redis://127.0.0.1:${o.value.port}`);
    expect(await redisAnswers('127.0.0.1', o.value.port)).toBe(true);
    expect(readdirSync(join(o.value.dir, 'appendonlydir')).some((f) => f.endsWith('.aof'))).toBe(
      true,
    );
    await redis.stop();
    expect(await redisAnswers('127.0.0.1', o.value.port)).toBe(false);
    expect(o.said).toEqual([]);
  });

  it("as root with apt-get, installs Debian's redis-server first, saying so in one line", async () => {
    const o = await options();
    started.push(await startLocalRedis(['apt-get'], o.value));
    expect(o.ran).toEqual(['apt-get update -qq', 'apt-get install -y -qq redis-server']);
    expect(o.said).toEqual([
      "redis-server is not on the PATH: installing Debian's redis-server package (apt-get install redis-server)",
    ]);
    expect(await redisAnswers('127.0.0.1', o.value.port)).toBe(true);
  });

  it("after installing Debian's redis-server, uses the service the package started, if one answers", async () => {
    const o = await options({ port: Number(new URL(testRedisUrl()).port || 6379) });
    const redis = await startLocalRedis(['apt-get'], o.value);
    expect(redis.url).toBe(`redis://127.0.0.1:${o.value.port}`);
    expect(o.said.at(-1)).toBe(
      `Debian's redis-server service answers on 127.0.0.1:${o.value.port}: using it`,
    );
    await redis.stop();
    expect(await redisAnswers('127.0.0.1', o.value.port)).toBe(true);
  });

  it('tries the next way when one fails, and names why each failed when none works', async () => {
    const o = await options({ run: () => 'exited with 100: E: no network' });
    const failure = startLocalRedis(['apt-get', 'docker'], o.value);
    await expect(failure).rejects.toThrow(LocalRedisError);
    await expect(failure).rejects.toThrow(
      'no private Redis could be started (apt-get failed: apt-get install redis-server: exited with 100: E: no network; ' +
        'docker failed: docker run exited with 125: Cannot connect to the Docker daemon)',
    );
    expect(o.said.at(-1)).toBe(
      'the private Redis: apt-get failed: apt-get install redis-server: exited with 100: E: no network; trying a redis:7-alpine container',
    );
    expect(existsSync(o.value.dir)).toBe(true);
  });
});

describe('redisContainerArgs', () => {
  it('publishes on loopback only, keeps the data in the folder, runs as the user, with the append-only file on', () => {
    expect(redisContainerArgs({ port: 6379, dir: '/repo/.data/redis', user: '1000:1000' })).toEqual(
      [
        'run',
        '--detach',
        '--rm',
        '--user',
        '1000:1000',
        '--publish',
        '127.0.0.1:6379:6379',
        '--volume',
        '/repo/.data/redis:/data',
        'redis:7-alpine',
        'redis-server',
        '--appendonly',
        'yes',
        '--save',
        '',
      ],
    );
  });
});

describe('dockerAnswers', () => {
  it('asks the engine, briefly: a docker command whose engine does not answer is no Docker', () => {
    const asked: [readonly string[], number | undefined][] = [];
    expect(dockerAnswers((args, timeoutMs) => (asked.push([args, timeoutMs]), '28.2.2'))).toBe(
      true,
    );
    expect(asked).toEqual([[['info', '--format', '{{.ServerVersion}}'], 10_000]]);
    const noEngine = () => {
      throw new Error('docker info exited with 1: Cannot connect to the Docker daemon');
    };
    expect(dockerAnswers(noEngine)).toBe(false);
  });
});
