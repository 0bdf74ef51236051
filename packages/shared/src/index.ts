export * from './errors.js';
export * from './logger.js';
export * from './readable-log.js';
export * from './config/env.js';
export * from './config/signing-env.js';
export * from './config/start-env.js';
export * from './events/fields.js';
export * from './events/quote.js';
export * from './events/contract.js';
export * from './events/sales-opportunity.js';
export * from './events/registry.js';
export * from './actions/action-table.js';
export * from './events/acknowledgement.js';
export * from './events/error-codes.js';
export * from './events/samples.js';
export * from './signing/canonical-json.js';
export * from './signing/signature.js';
export * from './queue/queues.js';
export * from './queue/action-jobs.js';
export * from './rules/routing-rules.js';
export * from './auth/token-manager.js';
export * from './outcomes/outcome-store.js';
export * from './intake/webhook-id.js';
export * from './intake/webhook-intake.js';
export * from './circuits/circuit-store.js';
export {
  CIRCUIT_ENTER_ARGS,
  CIRCUIT_ENTER_FUNCTION,
  CIRCUIT_ENTER_KEYS,
  RELEASED_AFTER_FAILED_PROBES,
} from './circuits/circuit-scripts.js';
export * from './actions/actions-config.js';
export * from './rules/rules-store.js';
export * from './lifecycle.js';
export * from './redis.js';
export * from './openapi/openapi-document.js';
export * from './records/embedded-postgres.js';
export * from './records/record-changes.js';
export * from './records/ingress-counts.js';
export * from './records/audit-log.js';
export * from './health-server.js';
export * from './outcomes/kept-acks.js';
export * from './tracing.js';
export * from './ingress-runtime.js';
export * from './records/rejected-changes.js';
