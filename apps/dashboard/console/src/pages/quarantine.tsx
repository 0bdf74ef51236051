// Quarantine: authentic events that failed their schema, kept without running any action, newest
// first, a page at a time (the cursor lives in the URL, as a search's does). Each can be released
// or discarded; a bulk release, of every page, is counted first (a dry run), then confirmed.
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { QuarantinedSummary, QuarantinePage as Page } from '../api.js';
import { TimeRange, useFields } from '../fields.js';
import { leftQuarantine, QuarantineAnswerView, QuarantineButtons } from '../quarantine-actions.js';
import type { QuarantineAnswer } from '../quarantine-actions.js';
import { href, navigate } from '../router.js';
import { bytes, plural, ProblemList, Show, Time, useLoad, WebhookLink } from '../ui.js';
import { BulkRelease } from './bulk-release.js';
import { EventTypeChoice, toIso } from './search.js';

const FILTERS = ['event_type', 'from', 'to'] as const;

export function QuarantinePage({ params }: { params: URLSearchParams }) {
  const { values: form, set } = useFields(FILTERS, params);
  const filter = {
    event_type: params.get('event_type') || undefined,
    from: toIso(params.get('from') || undefined),
    to: toIso(params.get('to') || undefined),
  };
  const cursor = params.get('cursor') || undefined;
  const [loaded, reload] = useLoad(
    () => api<Page>(`/quarantine${query({ ...filter, cursor })}`),
    params.toString(),
  );
  // Released or discarded from this page: left out of the list at once, as the record store it is
  // read from learns of the change a moment after Redis, so the list read again may still hold it.
  const [left, setLeft] = useState<ReadonlySet<string>>(new Set());
  const leave = (webhookIds: readonly string[]) => {
    setLeft((before) => new Set([...before, ...webhookIds]));
    reload();
  };
  // The last release's or discard's answer: kept here, as the webhook it names may leave the list.
  const [answer, setAnswer] = useState<QuarantineAnswer>();
  const done = (next: QuarantineAnswer) => {
    setAnswer(next);
    if (leftQuarantine(next)) leave([next.webhookId]);
  };

  return (
    <section>
      <h1>Quarantine</h1>
      <p class="muted">
        Authentic events that failed their schema, kept without running any action. Release one to
        validate it again under the running schema and, if it passes, run its actions under its
        webhook id; discard one that should never run, with a reason.
      </p>
      <form
        class="search"
        onSubmit={(event) => {
          event.preventDefault();
          navigate('/quarantine', form);
        }}
      >
        <EventTypeChoice value={form.event_type} set={set} />
        <TimeRange label="Received" from={form.from} to={form.to} set={set} />
        <button type="submit">Filter</button>
      </form>
      <BulkRelease filter={filter} key={params.toString()} done={leave} />
      <Show loaded={loaded}>
        {(page) => (
          <QuarantineList
            quarantined={page.quarantined.filter((item) => !left.has(item.webhook_id))}
            next={page.next_cursor}
            params={params}
            later={cursor !== undefined}
            answer={answer}
            done={done}
          />
        )}
      </Show>
    </section>
  );
}

function QuarantineList({
  quarantined,
  next,
  params,
  later,
  answer,
  done,
}: {
  quarantined: QuarantinedSummary[];
  next: string | null;
  params: URLSearchParams;
  later: boolean;
  answer: QuarantineAnswer | undefined;
  done: (answer: QuarantineAnswer) => void;
}) {
  // An answer is shown with its webhook; above the list once the webhook has left it.
  const listed = quarantined.some((item) => item.webhook_id === answer?.webhookId);
  return (
    <>
      <div aria-live="polite">
        {answer && !listed && <QuarantineAnswerView answer={answer} named />}
        <p class="muted">
          {quarantined.length === 0
            ? next
              ? 'None in this stretch of the quarantine; older ones may match.'
              : 'Nothing quarantined matches.'
            : `${plural(quarantined.length, 'quarantined webhook')}, newest first${
                later ? ' (a later page)' : ''
              }.`}
        </p>
      </div>
      {quarantined.map((item) => (
        <QuarantinedItem
          key={item.webhook_id}
          item={item}
          answer={answer?.webhookId === item.webhook_id ? answer : undefined}
          done={done}
        />
      ))}
      {next && (
        <a
          class="button"
          href={href('/quarantine', { ...Object.fromEntries(params), cursor: next })}
          rel="next"
        >
          Older quarantined webhooks
        </a>
      )}
    </>
  );
}

function QuarantinedItem({
  item,
  answer,
  done,
}: {
  item: QuarantinedSummary;
  answer: QuarantineAnswer | undefined;
  done: (answer: QuarantineAnswer) => void;
}) {
  return (
    <article class="quarantined" aria-label={`Quarantined webhook ${item.webhook_id}`}>
      <h2>
        <WebhookLink id={item.webhook_id} />
      </h2>
      <dl class="facts">
        <dt>Event type</dt>
        <dd>{item.event_type}</dd>
        <dt>Entity</dt>
        <dd>
          <a href={href('/', { q: item.entity_id })}>{item.entity_id}</a>
        </dd>
        <dt>Received</dt>
        <dd>
          <Time at={item.received_at} />
        </dd>
        <dt>Size</dt>
        <dd>{bytes(item.size)}</dd>
      </dl>
      <h3>Problems</h3>
      <ProblemList problems={item.problems} />
      {item.problem_count > item.problems.length && (
        <p class="muted">
          and {plural(item.problem_count - item.problems.length, 'more problem')}, on its page
        </p>
      )}
      <p>
        <a href={href(`/webhooks/${item.webhook_id}`)}>
          The event as received, on the webhook&apos;s page
        </a>
      </p>
      <QuarantineButtons webhookId={item.webhook_id} done={done} />
      {answer && <QuarantineAnswerView answer={answer} />}
    </article>
  );
}
