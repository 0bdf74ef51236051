// @pw/shared/records: what the record store receives (the record stream's changes, the ingress's
// counts, the audit log, the changes it rejected) and the embedded PostgreSQL of `npm start` and
// the tests.
export * from './record-changes.js';
export * from './ingress-counts.js';
export * from './audit-log.js';
export * from './rejected-changes.js';
export * from './embedded-postgres.js';
