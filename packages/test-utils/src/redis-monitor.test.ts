import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateRedis } from './redis-server.js';
import { RedisMonitor, parseMonitorLine } from './redis-monitor.js';
import type { MonitoredCommand } from './redis-monitor.js';

let server: PrivateRedis;
beforeAll(async () => {
  server = await PrivateRedis.start();
});
afterAll(async () => {
  await server.stop();
});

describe('RedisMonitor', () => {
  it('reports every command, a script’s own ones too, with their arguments as sent', async () => {
    const monitor = await RedisMonitor.start(server.url);
    const seen: MonitoredCommand[] = [];
    monitor.onCommand((command) => seen.push(command));
    const client = server.client();
    const awkward = 'quote "é" \\ \n\t\x01 end';
    // A busy feed: many commands, from a pipeline, each one reported in order.
    const pipeline = client.pipeline();
    for (let n = 0; n < 2_000; n++) pipeline.set(`key:${n}`, awkward);
    await pipeline.exec();
    await client.eval("return redis.call('GET', KEYS[1])", 1, 'key:7');
    await monitor.settle();
    monitor.stop();
    client.disconnect();

    const sets = seen.filter(({ args }) => args[0] === 'set');
    expect(sets).toHaveLength(2_000);
    expect(sets[1_999]!.args).toEqual(['set', 'key:1999', awkward]);
    expect(seen.find(({ source }) => source === 'lua')?.args).toEqual(['GET', 'key:7']);
    // The marker that settled the feed is not reported.
    expect(seen.some(({ args }) => args[0]?.toLowerCase() === 'echo')).toBe(false);
  });

  it('parses a line with a client address', () => {
    expect(parseMonitorLine('1795720128.430685 [0 127.0.0.1:5000] "HSET" "k" "a\\"b"')).toEqual({
      time: '1795720128.430685',
      source: '127.0.0.1:5000',
      args: ['HSET', 'k', 'a"b'],
    });
  });

  it('fails to settle once its connection is gone', async () => {
    const monitor = await RedisMonitor.start(server.url);
    monitor.stop();
    await expect(monitor.settle()).rejects.toThrow('stopped');
  });
});
