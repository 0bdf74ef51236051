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
export {
  isConnectionFailure,
  isStoreUnavailable,
  isWebhookNotStoredYet,
  storeFailure,
} from './store-errors.js';
export type { StoreFailure } from './store-errors.js';
// The record stream's reader: the changes as read, reading every partition's stream, the changes
// the store refused, set aside.
export * from './stream/changes.js';
export * from './stream/parse-change.js';
export * from './stream/record-streams.js';
export * from './stream/rejected-changes.js';
