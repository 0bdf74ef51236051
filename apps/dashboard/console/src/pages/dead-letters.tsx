// Dead letters: actions that used up their attempts or failed for good, a page at a time (the
// cursor lives in the URL, as a search's does). A bulk replay, of every page, is counted first (a
// dry run), then confirmed.
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { TimeRange, useFields } from '../fields.js';
import type { DeadLetter, DeadLetterPage } from '../api.js';
import { href, navigate } from '../router.js';
import { Columns, ConfirmButton, ErrorBox, Show, Time, useLoad, WebhookLink } from '../ui.js';
import { EventTypeChoice, toIso } from './search.js';

const FILTERS = ['action', 'event_type', 'from', 'to'] as const;

export function DeadLettersPage({ params }: { params: URLSearchParams }) {
  const { values: form, set } = useFields(FILTERS, params);
  const filter = {
    action: params.get('action') || undefined,
    event_type: params.get('event_type') || undefined,
    from: toIso(params.get('from') || undefined),
    to: toIso(params.get('to') || undefined),
  };
  const cursor = params.get('cursor') || undefined;
  const [loaded, reload] = useLoad(
    () => api<DeadLetterPage>(`/dead-letters${query({ ...filter, cursor })}`),
    params.toString(),
  );

  return (
    <section>
      <h1>Dead letters</h1>
      <form
        class="search"
        onSubmit={(event) => {
          event.preventDefault();
          navigate('/dead-letters', form);
        }}
      >
        <label>
          Action
          <input
            name="action"
            value={form.action}
            onInput={set('action')}
            placeholder="lock_price"
          />
        </label>
        <EventTypeChoice value={form.event_type} set={set} />
        <TimeRange label="Failed" from={form.from} to={form.to} set={set} />
        <button type="submit">Filter</button>
      </form>
      <BulkReplay filter={filter} key={params.toString()} done={reload} />
      <Show loaded={loaded}>
        {({ dead_letters: letters, next_cursor: next }) => (
          <>
            <p class="muted" aria-live="polite">
              {letters.length === 0
                ? next
                  ? 'None in this stretch of dead letters; older ones may match.'
                  : 'No dead letter matches.'
                : `${letters.length} dead letter${letters.length === 1 ? '' : 's'}, newest first${
                    cursor ? ' (a later page)' : ''
                  }.`}
            </p>
            {letters.length > 0 && <LetterTable letters={letters} />}
            {next && (
              <a
                class="button"
                href={href('/dead-letters', { ...Object.fromEntries(params), cursor: next })}
                rel="next"
              >
                Older dead letters
              </a>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

function LetterTable({ letters }: { letters: DeadLetter[] }) {
  return (
    <div class="scroll">
      <table>
        <Columns names={['Webhook', 'Action', 'Event', 'Calls', 'Failed', 'Reason']} />
        <tbody>
          {letters.map((letter) => (
            <tr key={`${letter.webhook_id}.${letter.action}`}>
              <td>
                <WebhookLink id={letter.webhook_id} />
              </td>
              <td>{letter.action}</td>
              <td>{letter.event_type}</td>
              <td>{letter.attempts}</td>
              <td>
                <Time at={letter.failed_at} />
              </td>
              <td class="error-text">{letter.failed_reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type Step =
  | { at: 'start' }
  | { at: 'counted'; count: number }
  | { at: 'replayed'; count: number }
  | { at: 'failed'; error: Error };

function BulkReplay({
  filter,
  done,
}: {
  filter: Record<string, string | undefined>;
  done: () => void;
}) {
  const [step, setStep] = useState<Step>({ at: 'start' });
  const count = async () => {
    try {
      const dry = await api<{ would_replay: number }>(
        `/dead-letters/replay${query({ ...filter, dry_run: 'true' })}`,
        { method: 'POST' },
      );
      setStep({ at: 'counted', count: dry.would_replay });
    } catch (error) {
      setStep({ at: 'failed', error: error as Error });
    }
  };
  const replay = async () => {
    try {
      const answer = await api<{ replayed: unknown[] }>(`/dead-letters/replay${query(filter)}`, {
        method: 'POST',
      });
      setStep({ at: 'replayed', count: answer.replayed.length });
      done();
    } catch (error) {
      setStep({ at: 'failed', error: error as Error });
    }
  };
  return (
    <div class="panel" aria-live="polite">
      {step.at === 'counted' ? (
        step.count === 0 ? (
          <p>Nothing to replay for these filters.</p>
        ) : (
          <ConfirmButton
            label={`Replay ${step.count} action${step.count === 1 ? '' : 's'}…`}
            question={`Replay ${step.count} action${step.count === 1 ? '' : 's'}?`}
            confirmLabel="Replay them"
            action={replay}
          />
        )
      ) : (
        <button type="button" onClick={() => void count()}>
          Count the dead letters to replay
        </button>
      )}
      {step.at === 'replayed' && (
        <p role="status">
          Replayed {step.count} action{step.count === 1 ? '' : 's'}: they are waiting to run again.
        </p>
      )}
      {step.at === 'failed' && <ErrorBox error={step.error} />}
    </div>
  );
}
