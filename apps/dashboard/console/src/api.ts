// The operator API as the console calls it: same origin, the browser's basic-auth credentials,
// JSON both ways. Every failure becomes an `ApiError` carrying the API's own error body.

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export type WebhookState = 'queued' | 'processing' | 'completed' | 'failed';

export interface Attempt {
  attempt: number;
  started_at: string;
  finished_at: string;
  outcome: 'completed' | 'retrying' | 'failed' | 'skipped' | 'held';
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface Action {
  name: string;
  state: string;
  attempts: number;
  last_error: string | null;
  completed_at: string | null;
  skipped?: string | null;
  held?: string | null;
  history?: Attempt[];
}

export interface WebhookSummary {
  webhook_id: string;
  event_type: string;
  entity_id: string;
  customer_id: string | null;
  received_at: string;
  finished_at?: string | null;
  state: WebhookState;
  trace_id?: string | null;
  actions: Action[];
}

export interface Webhook extends WebhookSummary {
  event?: Record<string, unknown> | null;
}

export interface DeadLetter {
  webhook_id: string;
  action: string;
  event_type: string;
  failed_reason: string;
  attempts: number;
  failed_at: string | null;
}

export interface Circuit {
  target: string;
  state: 'open' | 'closed';
  since: string | null;
  consecutive_failures: number;
  held_actions: number;
  manual: boolean;
  next_probe_at: string | null;
}

export interface AuditEntry {
  at: string;
  user: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
}

export interface TrendMinute {
  at: string;
  accepted: number;
  completed: number;
  failed: number;
  held: number;
}

export interface Trends {
  minutes: TrendMinute[];
  oldest_waiting_seconds: Record<string, number | null>;
}

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
    const error = (body as { error?: { code?: string; message?: string; details?: ErrorDetail[] } })
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
