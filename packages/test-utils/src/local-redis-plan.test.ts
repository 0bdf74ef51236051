import { describe, expect, it } from 'vitest';
import { planLocalRedis } from './local-redis-plan.js';
import type { LocalRedisFacts } from './local-redis-plan.js';

/** A laptop with nothing: REDIS_URL unset, nothing on the default address, no redis-server, not root, no Docker. */
const bare: LocalRedisFacts = {
  redisUrl: undefined,
  production: false,
  defaultAnswers: () => Promise.resolve(false),
  redisServerOnPath: () => false,
  canUseApt: () => false,
  dockerAnswers: () => false,
};
const plan = (facts: Partial<LocalRedisFacts>) => planLocalRedis({ ...bare, ...facts });
const never = () => {
  throw new Error('asked though not needed');
};

describe('planLocalRedis', () => {
  it('passes on a REDIS_URL, and in production, asks nothing else', async () => {
    const unasked = {
      defaultAnswers: never,
      redisServerOnPath: never,
      canUseApt: never,
      dockerAnswers: never,
    };
    expect(await plan({ ...unasked, redisUrl: 'redis://db:6379' })).toEqual({ kind: 'given' });
    expect(await plan({ ...unasked, production: true })).toEqual({ kind: 'given' });
  });

  it('uses the Redis that answers on the default address', async () => {
    const answers = { defaultAnswers: () => Promise.resolve(true) };
    expect(await plan({ ...answers, redisServerOnPath: never, dockerAnswers: never })).toEqual({
      kind: 'default',
    });
  });

  it('with nothing there, starts a redis-server from the PATH, else a container', async () => {
    expect(await plan({ redisServerOnPath: () => true, canUseApt: never })).toEqual({
      kind: 'private',
      ways: ['redis-server'],
    });
    expect(await plan({ redisServerOnPath: () => true, dockerAnswers: () => true })).toEqual({
      kind: 'private',
      ways: ['redis-server', 'docker'],
    });
    expect(await plan({ dockerAnswers: () => true })).toEqual({
      kind: 'private',
      ways: ['docker'],
    });
  });

  it("installs Debian's redis-server first only as root with apt-get", async () => {
    expect(await plan({ canUseApt: () => true })).toEqual({ kind: 'private', ways: ['apt-get'] });
    expect(await plan({ canUseApt: () => true, dockerAnswers: () => true })).toEqual({
      kind: 'private',
      ways: ['apt-get', 'docker'],
    });
  });

  it('with none of these, has no way: npm start says what to install', async () => {
    expect(await plan({})).toEqual({ kind: 'private', ways: [] });
  });
});
