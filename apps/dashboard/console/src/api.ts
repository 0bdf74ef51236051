// The operator API as the console calls it: same origin, the browser's basic-auth credentials,
// JSON both ways. Every failure becomes an `ApiError` carrying the API's own error body.

import type { Problem } from '@pw/shared/operator-api';
export type { SenderClock } from '@pw/shared/intake';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Problem[] = [],
  ) {
    super(message);
  }
}

// The answers' shapes are the server's own (packages/shared/src/operator-api/shapes.ts).
export type {
  ActionRecord,
  AttemptRecord,
  AuditPage,
  AuditRecord,
  CircuitView,
  DeadLetter,
  DeadLetterPage,
  Problem,
  BulkRelease,
  QuarantinedEvent,
  QuarantinedSummary,
  QuarantinePage,
  ReleasePreview,
  ReleaseResult,
  SearchPage,
  Trends,
  WebhookRecord,
  WebhookSummary,
} from '@pw/shared/operator-api';

/** A query string of the filters that have a value. */
export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Calls `/api{path}`; resolves with the JSON answer, rejects with an `ApiError`. */
export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const response = await fetch(`/api${path}`, {
    method: init.method ?? 'GET',
    credentials: 'same-origin',
    headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    body: init.body === undefined ? null : JSON.stringify(init.body),
  });
  const body = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string; details?: Problem[] } })
      ?.error;
    throw new ApiError(
      response.status,
      error?.code ?? 'http_error',
      error?.message ?? `The dashboard answered ${response.status}`,
      error?.details ?? [],
    );
  }
  return body as T;
}
