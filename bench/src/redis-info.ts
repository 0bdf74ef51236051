import { Redis } from 'ioredis';

/**
 * Redis's own CPU time so far (user and system, all its threads), in ms, from `INFO cpu`: the
 * share of the two cores a phase's Redis commands took, whoever sent them.
 */
export async function redisCpuMs(redis: Redis): Promise<number> {
  const cpu = await redis.info('cpu');
  const seconds = (name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  return 1000 * (seconds('used_cpu_user') + seconds('used_cpu_sys'));
}

/** The server's version and its `appendfsync` setting. */
export async function redisInfo(url: string): Promise<{ version: string; appendfsync: string }> {
  const redis = new Redis(url);
  try {
    const info = await redis.info('server');
    const fsync = await redis.config('GET', 'appendfsync');
    return {
      version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
      appendfsync: fsync[1] ?? 'unknown',
    };
  } finally {
    redis.disconnect();
  }
}
