import { readRepoFile } from './repo.js';

/**
 * The variables of the fixed external surface (docs/configuration.md), and the recorder's health
 * port (docs/records.md).
 */
export const CONTRACT_VARIABLES = [
  'NODE_ENV',
  'REDIS_URL',
  'QUEUE_PREFIX',
  'QUEUE_PARTITIONS',
  'REDIS_CLUSTER',
  'INGRESS_PORT',
  'DASHBOARD_PORT',
  'WORKER_HEALTH_PORT',
  'WEBHOOK_SECRETS',
  'SIGNATURE_MODE',
  'INGRESS_RATE_LIMIT',
  'MAX_BODY_BYTES',
  'AUTH_URL',
  'AUTH_REALM',
  'AUTH_CLIENT_ID',
  'AUTH_CLIENT_SECRET',
  'AUTH_SCOPE',
  'API_BASE_URL',
  'ACTIONS_CONFIG',
  'ACTION_ATTEMPTS',
  'ACTION_BACKOFF',
  'ACTION_BACKOFF_DELAY_MS',
  'WORKER_CONCURRENCY',
  'DEDUP_WINDOW_SECONDS',
  'MAX_CLOCK_SKEW_SECONDS',
  'RECORD_TTL_SECONDS',
  'DASHBOARD_USER',
  'DASHBOARD_PASSWORD',
  'LOG_LEVEL',
  'DATABASE_URL',
  'RECORD_RETENTION_DAYS',
  'RECORDER_HEALTH_PORT',
  // OpenTelemetry's own variables (docs/operations.md#tracing), of which compose passes these.
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
] as const;

/** Every `VARIABLE` the "Variables" section of docs/configuration.md names in backticks. */
export function documentedVariables(): Set<string> {
  const readme = readRepoFile('docs/configuration.md');
  const start = readme.indexOf('\n## Variables');
  if (start < 0) throw new Error('docs/configuration.md has no "## Variables" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return new Set([...section.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]!));
}

/** The names an app may be given: the contract's and the ones the docs document. */
export const knownAppVariables = (): Set<string> =>
  new Set([...CONTRACT_VARIABLES, ...documentedVariables()]);

/** Every app target (built FROM the shared runtime stage) and the variable of its port. */
export const APP_PORTS = {
  ingress: 'INGRESS_PORT',
  worker: 'WORKER_HEALTH_PORT',
  recorder: 'RECORDER_HEALTH_PORT',
  dashboard: 'DASHBOARD_PORT',
} as const;
export type App = keyof typeof APP_PORTS;
