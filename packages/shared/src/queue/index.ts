// @pw/shared/queue: the queues and their jobs (queues.ts, action-jobs.ts, action-queues.ts), the
// partitions and their stored count, and the map of every Redis key and channel (redis-keys.ts).
export { channels, keys } from './redis-keys.js';
export * from './queues.js';
export * from './action-jobs.js';
export * from './action-queues.js';
export * from './partitions.js';
export * from './partition-count.js';
