// The landing page: one box for a webhook id, an entity id or a customer id, plus filters.
// The query lives in the URL, so a search is a link that can be shared.
import { api, query } from '../api.js';
import { Choice, TimeRange, useFields } from '../fields.js';
import type { SearchPage as WebhookPage, WebhookSummary } from '../api.js';
import { href, navigate } from '../router.js';
import { age, Badge, Columns, Show, Time, useLoad, WebhookLink } from '../ui.js';

const WEBHOOK_ID = /^wh_[A-Za-z0-9_-]{22}$/;
const FILTERS = ['q', 'event_type', 'state', 'from', 'to'] as const;
export const EVENT_TYPES = [
  'quote.status_changed',
  'contract.status_changed',
  'sales_opportunity.status_changed',
];

/** The event type filter of a search, dead letters or the quarantine. */
export function EventTypeChoice({
  value,
  set,
}: {
  value: string;
  set: (name: 'event_type') => (event: Event) => void;
}) {
  return (
    <Choice
      label="Event type"
      name="event_type"
      value={value}
      options={EVENT_TYPES}
      onChange={set('event_type')}
    />
  );
}
const STATES = ['queued', 'processing', 'completed', 'failed', 'quarantined', 'discarded'];

/** `datetime-local` values are the browser's local time; the API takes ISO 8601 with a zone. */
export const toIso = (local: string | undefined) =>
  local ? new Date(local).toISOString() : undefined;

export function SearchPage({ params }: { params: URLSearchParams }) {
  const { values: form, set } = useFields(FILTERS, params);

  const submit = (event: Event) => {
    event.preventDefault();
    const text = form.q.trim();
    if (WEBHOOK_ID.test(text)) return navigate(`/webhooks/${text}`);
    navigate('/', { ...form, q: text });
  };

  return (
    <section>
      <h1>Find a webhook</h1>
      <form class="search" onSubmit={submit} role="search">
        <label class="wide">
          Webhook id, quote / contract / sales id, or customer id
          <input
            type="search"
            name="q"
            value={form.q}
            onInput={set('q')}
            placeholder="wh_…, Q-123, C-42"
            autoFocus
            autoComplete="off"
          />
        </label>
        <EventTypeChoice value={form.event_type} set={set} />
        <Choice
          label="State"
          name="state"
          value={form.state}
          options={STATES}
          onChange={set('state')}
        />
        <TimeRange label="Received" from={form.from} to={form.to} set={set} />
        <button type="submit">Search</button>
      </form>
      <Results params={params} />
    </section>
  );
}

function Results({ params }: { params: URLSearchParams }) {
  const filters = {
    q: params.get('q') ?? undefined,
    event_type: params.get('event_type') ?? undefined,
    state: params.get('state') ?? undefined,
    from: toIso(params.get('from') ?? undefined),
    to: toIso(params.get('to') ?? undefined),
    cursor: params.get('cursor') ?? undefined,
  };
  const [page] = useLoad(() => api<WebhookPage>(`/webhooks${query(filters)}`), params.toString());
  return (
    <Show loaded={page}>
      {({ webhooks, next_cursor: next }) => (
        <>
          <p class="muted" aria-live="polite">
            {webhooks.length === 0
              ? 'No webhook matches.'
              : `${webhooks.length} webhook${webhooks.length === 1 ? '' : 's'}, newest first${
                  filters.cursor ? ' (a later page)' : ''
                }.`}
          </p>
          {webhooks.length > 0 && <ResultTable webhooks={webhooks} />}
          {next && (
            <a
              class="button"
              href={href('/', { ...Object.fromEntries(params), cursor: next })}
              rel="next"
            >
              Older webhooks
            </a>
          )}
        </>
      )}
    </Show>
  );
}

function ResultTable({ webhooks }: { webhooks: WebhookSummary[] }) {
  return (
    <div class="scroll">
      <table class="results">
        <Columns names={['Webhook', 'Event', 'Entity', 'Customer', 'State', 'Actions', 'Age']} />
        <tbody>
          {webhooks.map((webhook) => (
            <tr key={webhook.webhook_id}>
              <td>
                <WebhookLink id={webhook.webhook_id} />
              </td>
              <td>{webhook.event_type}</td>
              <td>{webhook.entity_id}</td>
              <td>{webhook.customer_id ?? '–'}</td>
              <td>
                <Badge state={webhook.state} />
              </td>
              <td class="chips">
                {webhook.actions.map((action) => (
                  <span key={action.name} class={`chip badge-${action.state}`} title={action.state}>
                    {action.name}
                  </span>
                ))}
              </td>
              <td>
                <span title={webhook.received_at}>{age(webhook.received_at)}</span>
                <span class="sr-only">
                  {' '}
                  (received <Time at={webhook.received_at} />)
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
