import { describe, expect, it } from 'vitest';
import { PrivateRedis, redisPerTest } from '@pw/test-utils';
import {
  commandsBetween,
  parseCommandStats,
  parseCpuMs,
  parseReads,
  withoutOwnCalls,
} from './command-stats.js';

/** Lines as Redis 7 writes them, subcommands and a script's EVALSHA among them. */
const REPLY = [
  '# Commandstats',
  'cmdstat_evalsha:calls=40,usec=900,usec_per_call=22.50,rejected_calls=0,failed_calls=1',
  'cmdstat_config|resetstat:calls=1,usec=12,usec_per_call=12.00,rejected_calls=0,failed_calls=0',
  'cmdstat_hset:calls=120,usec=240,usec_per_call=2.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');

describe('reading INFO commandstats', () => {
  it('gives each command its calls and microseconds, subcommands by their full name', () => {
    const commands = parseCommandStats(REPLY);
    expect(Object.fromEntries(commands)).toEqual({
      evalsha: { calls: 40, usec: 900 },
      'config|resetstat': { calls: 1, usec: 12 },
      hset: { calls: 120, usec: 240 },
    });
  });

  it("takes out the measurer's own calls, keeping the rest of each command", () => {
    const left = withoutOwnCalls(
      parseCommandStats(REPLY),
      new Map([
        ['config|resetstat', 1],
        ['hset', 20],
      ]),
    );
    expect(left.has('config|resetstat')).toBe(false);
    expect(left.get('hset')).toEqual({ calls: 100, usec: 240 });
  });
});

describe("a real Redis's figures", () => {
  const context = redisPerTest();

  it('count the commands a client sent between two readings, and inside a script', async () => {
    const { redis, prefix } = context;
    const before = parseCommandStats(await redis.info('commandstats'));
    for (let i = 0; i < 3; i++) await redis.set(`${prefix}:k${i}`, 'v');
    await redis.eval("return redis.call('GET', KEYS[1])", 1, `${prefix}:k0`);
    await redis.config('GET', 'maxmemory');
    const added = commandsBetween(before, parseCommandStats(await redis.info('commandstats')));
    // Other suites share this Redis: at least what this test sent.
    expect(added.get('set')?.calls).toBeGreaterThanOrEqual(3);
    expect(added.get('eval')?.calls).toBeGreaterThanOrEqual(1);
    expect(added.get('get')?.calls).toBeGreaterThanOrEqual(1);
    expect(added.get('config|get')?.calls).toBeGreaterThanOrEqual(1);
    expect(added.get('set')?.usec).toBeGreaterThanOrEqual(0);
  });

  it("give Redis's CPU time in ms from INFO cpu", async () => {
    const { redis } = context;
    const first = parseCpuMs(await redis.info('cpu'));
    expect(first).toBeGreaterThan(0);
    expect(parseCpuMs(await redis.info('cpu'))).toBeGreaterThanOrEqual(first);
  });
});

describe("a private Redis's reads", () => {
  it('count one read per request sent alone, and one for many sent in one write', async () => {
    const server = await PrivateRedis.start();
    const redis = server.client();
    try {
      const reads = async () => parseReads(await redis.info('stats'));
      const before = await reads();
      for (let i = 0; i < 20; i++) await redis.set(`k${i}`, 'v');
      const alone = (await reads()) - before;
      const pipeline = redis.pipeline();
      for (let i = 0; i < 20; i++) pipeline.set(`k${i}`, 'v');
      await pipeline.exec();
      const together = (await reads()) - before - alone;
      // Each count includes the INFO that read it.
      expect(alone).toBe(21);
      expect(together).toBe(2);
    } finally {
      redis.disconnect();
      await server.destroy();
    }
  });
});
