// Small pieces every page uses: loading and error states, state badges, times, confirmations,
// a quarantined event's problems and an event as received.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import type { Problem } from './api.js';
import { href } from './router.js';

/** What a load is at: nothing yet, the answer, or why it failed. */
export type Loaded<T> =
  | { status: 'loading' }
  | { status: 'done'; value: T }
  | { status: 'failed'; error: ApiError | Error };

/**
 * Runs `load` when `key` changes, and every `refreshMs` if given (the previous answer stays on
 * screen while the next one comes); `reload` runs it again at once.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  key: string,
  refreshMs?: number,
): [Loaded<T>, () => void] {
  const [state, setState] = useState<Loaded<T>>({ status: 'loading' });
  const latest = useRef(load);
  latest.current = load;
  const run = useCallback(() => {
    latest.current().then(
      (value) => setState({ status: 'done', value }),
      (error: unknown) => setState({ status: 'failed', error: error as Error }),
    );
  }, []);
  useEffect(() => {
    setState({ status: 'loading' });
    run();
    if (!refreshMs) return undefined;
    const timer = setInterval(run, refreshMs);
    return () => clearInterval(timer);
  }, [key, refreshMs, run]);
  return [state, run];
}

/** An API error as the operator reads it, with each detail at its path. */
export function ErrorBox({ error }: { error: Error }) {
  const details = error instanceof ApiError ? error.details : [];
  const unavailable = error instanceof ApiError && error.code === 'store_unavailable';
  return (
    <div class="error" role="alert">
      <p>
        {error.message}
        {unavailable ? ' (the record store is off: set DATABASE_URL)' : ''}
      </p>
      {details.length > 0 && (
        <ul>
          {details.map((detail) => (
            <li key={`${detail.path}:${detail.message}`}>
              <code>{detail.path || '(document)'}</code>: {detail.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Renders a load: a line while loading, the error, or `children(value)`. */
export function Show<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (value: T) => ComponentChildren;
}) {
  if (loaded.status === 'loading') return <p class="muted">Loading…</p>;
  if (loaded.status === 'failed') return <ErrorBox error={loaded.error} />;
  return <>{children(loaded.value)}</>;
}

export function Badge({ state }: { state: string }) {
  return <span class={`badge badge-${state}`}>{state}</span>;
}

/** A time as the operator's clock shows it, the exact ISO time on hover. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">–</span>;
  return (
    <time dateTime={at} title={at}>
      {new Date(at).toLocaleString()}
    </time>
  );
}

/** `1 webhook`, `2 webhooks`. */
export const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** A size in bytes, as people read it: `812 bytes`, `61.4 KB`, `2.3 MB` (1 KB = 1,000 bytes). */
export function bytes(count: number): string {
  if (count < 1000) return plural(count, 'byte');
  if (count < 1_000_000) return `${(count / 1000).toFixed(1)} KB`;
  return `${(count / 1_000_000).toFixed(1)} MB`;
}

/** How long ago, coarsely: `12 s`, `5 min`, `3 h`, `2 d`. */
export function age(at: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(at)) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/**
 * A button that asks before it acts: the first press shows `question` with a confirm and a
 * cancel button (the confirm takes the focus), the confirm runs `action`.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  action,
  disabled,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  action: () => Promise<void> | void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        class="danger"
        ref={confirm}
        disabled={busy}
        onClick={() => {
          setBusy(true);
          void Promise.resolve(action()).finally(() => {
            setBusy(false);
            setAsking(false);
          });
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A link to a webhook's page, its id in monospace. */
export function WebhookLink({ id }: { id: string }) {
  return (
    <a href={href(`/webhooks/${id}`)}>
      <code>{id}</code>
    </a>
  );
}

/** A table's header row, one column heading per name. */
export function Columns({ names }: { names: readonly string[] }) {
  return (
    <thead>
      <tr>
        {names.map((name) => (
          <th scope="col" key={name}>
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Why an event fails its schema: each field's path and what is wrong with it. */
export function ProblemList({ problems }: { problems: readonly Problem[] }) {
  return (
    <ul class="problems">
      {problems.map((problem) => (
        <li key={`${problem.path}:${problem.message}`}>
          <code>{problem.path || '(the event)'}</code>: {problem.message}
        </li>
      ))}
    </ul>
  );
}

/** The event as received, formatted, the signature left out (the API already leaves it out). */
export function EventJson({ event }: { event: Record<string, unknown> | null | undefined }) {
  if (!event) return <p class="muted">The event was not recorded.</p>;
  const { signature: _signature, ...rest } = event;
  return <pre class="event">{JSON.stringify(rest, null, 2)}</pre>;
}
