// @pw/shared/runtime: what every process runs on: errors, the logger (and `npm start`'s readable
// lines), the HTTP servers' lifecycle and the health server, the Redis clients, tracing, and the
// ingress's node flags.
export * from './errors.js';
export * from './logger.js';
export * from './readable-log.js';
export * from './lifecycle.js';
export {
  createRedis,
  duplicateRedis,
  hasHashTag,
  INVALID_REDIS_URL,
  parseRedisUrl,
  redisHosts,
} from './redis.js';
export type { ParsedRedisUrl, RedisClient, RedisClientOptions, RedisNode } from './redis.js';
export * from './health-server.js';
export * from './tracing.js';
export * from './ingress-runtime.js';
