// @pw/shared/events: the webhook events (their schemas, registry and sample events), the ack and
// error bodies the ingress answers with, its error codes, and the problems of an invalid event.
export { identifier, IDENTIFIER_MAX_LENGTH } from './fields.js';
export * from './quote.js';
export * from './contract.js';
export * from './sales-opportunity.js';
export * from './registry.js';
export * from './problem.js';
export * from './recheck.js';
export { NUL_PROBLEM } from './status-changed-event.js';
export * from './acknowledgement.js';
export * from './error-codes.js';
export * from './samples.js';
