import { pino } from 'pino';
import type { Logger, LoggerOptions } from 'pino';
import { traceFields, tracingOn } from './tracing.js';

export type { Logger };

/** Paths that may hold a secret; pino replaces their values before a line is written. */
export const REDACTED_PATHS = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'signature',
  '*.signature',
  'secret',
  '*.secret',
  'secrets',
  '*.secrets',
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
  'password',
  '*.password',
  'access_token',
  '*.access_token',
  'accessToken',
  '*.accessToken',
  'token',
  '*.token',
  'WEBHOOK_SECRETS',
  '*.WEBHOOK_SECRETS',
  'AUTH_CLIENT_SECRET',
  '*.AUTH_CLIENT_SECRET',
  'DASHBOARD_PASSWORD',
  '*.DASHBOARD_PASSWORD',
  'webhookSecrets',
  '*.webhookSecrets',
];

export interface LoggerSettings {
  /** Process name, bound on every line. */
  name: string;
  /** @defaultValue `'info'` */
  level?: string;
  /** Where lines go; a pino destination or any writable stream. @defaultValue stdout */
  destination?: pino.DestinationStream;
}

/**
 * A JSON logger with secrets redacted. Child loggers add `webhook_id`, `action`, `job_id`; with
 * tracing on, lines written inside a span carry its `trace_id` and `span_id`.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    name: settings.name,
    level: settings.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // `trace_id` and `span_id` of the active span, when tracing is on (nothing otherwise).
    ...(tracingOn() ? { mixin: traceFields } : {}),
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
