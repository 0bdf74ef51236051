export * from './record-store.js';
export * from './record-types.js';
export { MIGRATION_CHANGED, MIGRATIONS_DIRECTORY, SCHEMA_MISSING, migrate } from './migrate.js';
export { INVALID_CURSOR, INVALID_TIME } from './query-input.js';
export {
  actionsQuery,
  auditQuery,
  historyQuery,
  searchQuery,
  webhookQuery,
} from './read-queries.js';
export type { PageQuery, Query } from './read-queries.js';
export { isConnectionFailure, isStoreUnavailable, storeFailure } from './store-errors.js';
export type { StoreFailure } from './store-errors.js';
