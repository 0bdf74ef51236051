// @pw/shared/records: what the record store receives (the record stream's entries as their writers
// append them, the ingress's counts, the audit log) and the embedded PostgreSQL of `npm start` and
// the tests. The stream's reader (the changes as read, the changes set aside) is `@pw/records`.
export * from './record-changes.js';
export * from './ingress-counts.js';
export * from './audit-log.js';
export * from './embedded-postgres.js';
