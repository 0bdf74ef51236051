export * from './redis-server.js';
export * from './redis-cluster.js';
export * from './test-redis.js';
export * from './fixtures.js';
export * from './child-process.js';
export * from './chromium.js';
export * from './ensure-chromium.js';
export * from './test-postgres.js';
