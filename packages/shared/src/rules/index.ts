// @pw/shared/rules: the routing rules (which actions an event sets off) and where they are kept.
export * from './routing-rules.js';
export * from './rules-store.js';
