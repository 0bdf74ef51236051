// One webhook: its actions with their attempt timelines, its event, a replay of what failed; a
// quarantined one's problems, with its release and discard. The page refreshes itself every 2 s,
// so a replay or a release can be watched to its end.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { ActionRecord, AttemptRecord, WebhookRecord } from '../api.js';
import { leftQuarantine, QuarantineAnswerView, QuarantineButtons } from '../quarantine-actions.js';
import type { QuarantineAnswer } from '../quarantine-actions.js';
import { href } from '../router.js';
import {
  Badge,
  Columns,
  ConfirmButton,
  ErrorBox,
  EventJson,
  ProblemList,
  Show,
  Time,
  useLoad,
} from '../ui.js';

const REFRESH_MS = 2000;

export function WebhookPage({ webhookId }: { webhookId: string }) {
  const [loaded, reload] = useLoad(
    () => api<WebhookRecord>(`/webhooks/${encodeURIComponent(webhookId)}`),
    webhookId,
    REFRESH_MS,
  );
  return (
    <section>
      <p>
        <a href={href('/')}>← Search</a>
      </p>
      <h1>
        Webhook <code>{webhookId}</code>
      </h1>
      <Show loaded={loaded}>{(webhook) => <WebhookView webhook={webhook} reload={reload} />}</Show>
    </section>
  );
}

function WebhookView({ webhook, reload }: { webhook: WebhookRecord; reload: () => void }) {
  const failed = webhook.actions.filter((action) => action.state === 'failed');
  // Kept here: once replayed, nothing has failed any more, but the answer stays on screen.
  const [replay, setReplay] = useState<ReplayResult>({});
  return (
    <>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <Badge state={webhook.state} />
        </dd>
        <dt>Event type</dt>
        <dd>{webhook.event_type}</dd>
        <dt>Entity</dt>
        <dd>
          <a href={href('/', { q: webhook.entity_id })}>{webhook.entity_id}</a>
        </dd>
        <dt>Customer</dt>
        <dd>
          {webhook.customer_id ? (
            <a href={href('/', { q: webhook.customer_id })}>{webhook.customer_id}</a>
          ) : (
            '–'
          )}
        </dd>
        <dt>Received</dt>
        <dd>
          <Time at={webhook.received_at} />
        </dd>
        {webhook.trace_id && (
          <>
            <dt>Trace id</dt>
            <dd>
              <code class="trace-id">{webhook.trace_id}</code>
            </dd>
          </>
        )}
      </dl>
      {(failed.length > 0 || replay.replayed || replay.error) && (
        <Replay
          webhookId={webhook.webhook_id}
          failed={failed}
          result={replay}
          done={(result) => {
            setReplay(result);
            reload();
          }}
        />
      )}
      {webhook.problems && <Problems webhook={webhook} reload={reload} />}
      {webhook.actions.length > 0 && (
        <>
          <h2>Actions</h2>
          {webhook.actions.map((action) => (
            <ActionView key={action.name} webhookId={webhook.webhook_id} action={action} />
          ))}
        </>
      )}
      <h2>Event</h2>
      <EventJson event={webhook.event} />
    </>
  );
}

/** What became of a webhook whose event failed its schema on arrival, by its state now. */
const HOW_KEPT = {
  quarantined:
    'Quarantined: the event is authentic but failed its schema; it was kept and runs no action.',
  discarded:
    'Discarded: the event failed its schema on arrival, was kept, then discarded; it ran no action.',
  released:
    'Released: the event failed its schema on arrival, was kept, then released to run its actions.',
};

/** Why a quarantined (or once quarantined) webhook's event failed its schema; release, discard. */
function Problems({ webhook, reload }: { webhook: WebhookRecord; reload: () => void }) {
  // Kept here: once released or discarded, the buttons go (before the record store, which the
  // page is read from, has learnt of it), but the answer stays on screen.
  const [answer, setAnswer] = useState<QuarantineAnswer>();
  const quarantined = webhook.state === 'quarantined';
  const { state } = webhook;
  const kept = state === 'quarantined' || state === 'discarded' ? state : 'released';
  return (
    <>
      <h2>Problems</h2>
      <p>{HOW_KEPT[kept]}</p>
      <ProblemList problems={webhook.problems ?? []} />
      {quarantined && !(answer && leftQuarantine(answer)) && (
        <QuarantineButtons
          webhookId={webhook.webhook_id}
          done={(next) => {
            setAnswer(next);
            reload();
          }}
        />
      )}
      {answer && <QuarantineAnswerView answer={answer} />}
    </>
  );
}

interface ReplayResult {
  replayed?: string[];
  error?: Error;
}

function Replay({
  webhookId,
  failed,
  result,
  done,
}: {
  webhookId: string;
  failed: ActionRecord[];
  result: ReplayResult;
  done: (result: ReplayResult) => void;
}) {
  const names = failed.map((action) => action.name).join(', ');
  const replay = async () => {
    try {
      const answer = await api<{ replayed: string[] }>(
        `/webhooks/${encodeURIComponent(webhookId)}/replay`,
        { method: 'POST' },
      );
      done({ replayed: answer.replayed });
    } catch (error) {
      done({ error: error as Error });
    }
  };
  return (
    <div class="panel">
      {failed.length > 0 && (
        <ConfirmButton
          label={`Replay failed actions (${failed.length})`}
          question={`Replay ${names}? Each is called again, with the same Idempotency-Key.`}
          confirmLabel="Replay"
          action={replay}
        />
      )}
      {result.replayed && (
        <p role="status">Replayed: {result.replayed.join(', ') || 'nothing had failed'}.</p>
      )}
      {result.error && <ErrorBox error={result.error} />}
    </div>
  );
}

/** What a hold means, for the badge's title. */
const HELD_MEANS: Record<NonNullable<ActionRecord['held']>, string> = {
  circuit_open:
    "its target's circuit is open: it waits, spending no attempt, for a probe to succeed",
  entity_busy:
    'it waits its turn, spending no attempt: a call of this action for the same entity is in flight',
};

function ActionView({ webhookId, action }: { webhookId: string; action: ActionRecord }) {
  const jobId = `${webhookId}.${action.name}`;
  return (
    <article class="action" aria-label={`Action ${action.name}`}>
      <header>
        <h3>{action.name}</h3>
        <Badge state={action.state} />
        {action.held && (
          <span class="badge badge-held" title={HELD_MEANS[action.held]}>
            held: {action.held}
          </span>
        )}
        {action.skipped && <span class="badge">skipped: {action.skipped}</span>}
      </header>
      <dl class="facts">
        <dt>Calls made</dt>
        <dd>{action.attempts}</dd>
        <dt>Idempotency-Key</dt>
        <dd>
          <code>
            {webhookId}:{action.name}
          </code>
        </dd>
        <dt>Job</dt>
        <dd>
          <a href={`admin/queues/queue/actions/${encodeURIComponent(jobId)}`}>
            {jobId} on the board
          </a>
        </dd>
        {action.last_error && (
          <>
            <dt>Last error</dt>
            <dd class="error-text">{action.last_error}</dd>
          </>
        )}
      </dl>
      <Timeline history={action.history ?? []} />
    </article>
  );
}

function Timeline({ history }: { history: AttemptRecord[] }) {
  if (history.length === 0) {
    return <p class="muted">No attempt recorded yet.</p>;
  }
  return (
    <div class="scroll">
      <table class="timeline">
        <caption class="sr-only">Attempts, oldest first</caption>
        <Columns names={['#', 'Started', 'Outcome', 'HTTP status', 'Duration', 'Error']} />
        <tbody>
          {history.map((attempt, index) => (
            <tr key={`${attempt.attempt}-${index}`} class={`outcome-${attempt.outcome}`}>
              <td>{attempt.attempt}</td>
              <td>
                <Time at={attempt.started_at} />
              </td>
              <td>
                <Badge state={attempt.outcome} />
                {attempt.outcome === 'held' && (
                  <span class="muted"> held until the circuit closes</span>
                )}
              </td>
              <td>{attempt.status ?? '–'}</td>
              <td>{attempt.duration_ms} ms</td>
              <td class="error-text">{attempt.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
