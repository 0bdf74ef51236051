import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { INVALID_ARGUMENT } from './errors.js';
// Relative: @pw/test-utils depends on this package, so it is not one of its dependencies.
import { testRedisUrl } from '../../test-utils/src/test-redis.js';
import {
  createRedis,
  duplicateRedis,
  hasHashTag,
  INVALID_REDIS_URL,
  parseRedisUrl,
  redisHosts,
} from './redis.js';

describe('REDIS_URL', () => {
  it('reads one server, with credentials, TLS and a database', () => {
    expect(parseRedisUrl('rediss://user:p%40ss@redis.example:6380/2')).toEqual({
      nodes: [{ host: 'redis.example', port: 6380 }],
      tls: true,
      username: 'user',
      password: 'p@ss',
      db: 2,
    });
    expect(parseRedisUrl('redis://localhost')).toEqual({
      nodes: [{ host: 'localhost', port: 6379 }],
      tls: false,
      db: 0,
    });
  });

  it('reads several comma-separated seed nodes of a cluster', () => {
    const parsed = parseRedisUrl('redis://:secret@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002');
    expect(parsed.nodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(parsed.password).toBe('secret');
    expect(redisHosts('redis://:secret@10.0.0.1:7000,10.0.0.2:7001')).toBe(
      '10.0.0.1:7000,10.0.0.2:7001',
    );
  });

  it('refuses what is not one', () => {
    expect(() => parseRedisUrl('http://x')).toThrow('redis://');
    expect(() => parseRedisUrl('redis://a:1,,b:2')).toThrow('invalid host:port ""');
    expect(() => parseRedisUrl('redis://a:port')).toThrow('invalid host:port "a:port"');
    expect(() => parseRedisUrl('redis://a:1/db')).toThrow('database number');
    expect(() => parseRedisUrl('redis://a:port')).toThrow(
      expect.objectContaining({ code: INVALID_REDIS_URL }),
    );
  });
});

describe('hash tags', () => {
  it('knows a prefix whose keys all hash to one slot', () => {
    expect(hasHashTag('{pw}')).toBe(true);
    expect(hasHashTag('{pw}-prod')).toBe(true);
    expect(hasHashTag('pw')).toBe(false);
    expect(hasHashTag('{}pw')).toBe(false);
    expect(hasHashTag('pw{')).toBe(false);
  });
});

describe('createRedis', () => {
  it('makes a Redis for one server and a Cluster for a cluster, with the same settings', () => {
    const single = createRedis('redis://127.0.0.1:6399', false, { lazyConnect: true });
    expect(single).toBeInstanceOf(Redis);
    expect(() => createRedis('redis://a:1,b:2', false)).toThrow('REDIS_CLUSTER=true');
    expect(() => createRedis('redis://a:1,b:2', false)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: INVALID_ARGUMENT }),
    );

    const cluster = createRedis('redis://u:p@127.0.0.1:7000,127.0.0.1:7001', true, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: null,
      connectionName: 'pw-test',
    });
    expect(cluster).toBeInstanceOf(Cluster);
    const options = (cluster as Cluster).options;
    expect(options.enableOfflineQueue).toBe(false);
    expect(options.redisOptions).toMatchObject({
      username: 'u',
      password: 'p',
      maxRetriesPerRequest: null,
      connectionName: 'pw-test',
    });

    // A subscriber: a new cluster client, the same seeds and settings, with the overrides.
    const copy = duplicateRedis(cluster, { enableOfflineQueue: true }) as Cluster;
    expect(copy).toBeInstanceOf(Cluster);
    expect(copy).not.toBe(cluster);
    expect(copy.options.enableOfflineQueue).toBe(true);
    expect(copy.options.redisOptions).toMatchObject({ password: 'p', connectionName: 'pw-test' });
    expect(duplicateRedis(single)).toBeInstanceOf(Redis);
    // Auto-pipelining is the cluster client's own option, not each node's.
    const piped = duplicateRedis(cluster, { enableAutoPipelining: true }) as Cluster;
    expect(piped.options.enableAutoPipelining).toBe(true);
    expect(piped.options.redisOptions).not.toHaveProperty('enableAutoPipelining');
    expect(duplicateRedis(single, { enableAutoPipelining: true }).options).toMatchObject({
      enableAutoPipelining: true,
    });
    for (const client of [single, cluster, copy, piped]) client.disconnect();
  });

  it('reconnects on READONLY and LOADING, on one server and on a cluster', () => {
    const single = createRedis('redis://127.0.0.1:6399', false, { lazyConnect: true });
    const cluster = createRedis('redis://127.0.0.1:7000', true, { lazyConnect: true }) as Cluster;
    for (const reconnect of [
      (single as Redis).options.reconnectOnError,
      cluster.options.redisOptions?.reconnectOnError,
    ]) {
      expect(reconnect?.(new Error("READONLY You can't write against a read only replica."))).toBe(
        1,
      );
      expect(reconnect?.(new Error('LOADING Redis is loading the dataset in memory'))).toBe(1);
      expect(reconnect?.(new Error('ERR unknown command'))).toBe(false);
    }
    single.disconnect();
    cluster.disconnect();
  });
});

describe('duplicateRedis', () => {
  it('gives a blocking reader no command time-out: its wait outlasts the time-out of the client it copies', async () => {
    const key = `pw-test-blocking-${process.pid}-${Date.now()}`;
    const client = createRedis(testRedisUrl(), false, { commandTimeout: 100 });
    const reader = duplicateRedis(client);
    try {
      await expect(client.blpop(key, 0.3)).rejects.toThrow('Command timed out');
      expect(await reader.blpop(key, 0.3)).toBeNull();
    } finally {
      client.disconnect();
      reader.disconnect();
    }
  });
});
