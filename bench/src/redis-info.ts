import { Redis } from 'ioredis';

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
