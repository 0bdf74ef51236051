// Releasing or discarding one quarantined webhook, from the quarantine page or the webhook's own
// page. The answer is handed to the page, which keeps it on screen: a released or discarded
// webhook leaves the list it was in, and its buttons with it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import type { Problem } from './api.js';
import { ConfirmButton, ErrorBox, ProblemList, WebhookLink } from './ui.js';

/** The most characters a discard's reason may have (the API refuses more). */
const REASON_MAX = 500;

/** What releasing or discarding a quarantined webhook came to. */
export type QuarantineAnswer = { webhookId: string } & (
  | { outcome: 'released'; actions: string[] }
  | { outcome: 'discarded' }
  | { outcome: 'still_invalid'; problems: Problem[] }
  | { outcome: 'not_quarantined'; message: string }
  | { outcome: 'failed'; error: Error }
);

/** True when the webhook is no longer quarantined after `answer`: its list should be read again. */
export const leftQuarantine = (answer: QuarantineAnswer) =>
  answer.outcome === 'released' ||
  answer.outcome === 'discarded' ||
  answer.outcome === 'not_quarantined';

async function release(webhookId: string): Promise<QuarantineAnswer> {
  const path = `/quarantine/${encodeURIComponent(webhookId)}/release`;
  try {
    const answer = await api<{ actions_triggered: string[] }>(path, { method: 'POST' });
    return { webhookId, outcome: 'released', actions: answer.actions_triggered };
  } catch (error) {
    return refused(webhookId, error as Error);
  }
}

async function discard(webhookId: string, reason: string): Promise<QuarantineAnswer> {
  const path = `/quarantine/${encodeURIComponent(webhookId)}/discard`;
  try {
    await api(path, { method: 'POST', body: { reason } });
    return { webhookId, outcome: 'discarded' };
  } catch (error) {
    return refused(webhookId, error as Error);
  }
}

/** The API's refusals an operator acts on differently from any other error. */
function refused(webhookId: string, error: Error): QuarantineAnswer {
  if (error instanceof ApiError && error.code === 'still_invalid') {
    return { webhookId, outcome: 'still_invalid', problems: error.details };
  }
  if (error instanceof ApiError && error.code === 'not_quarantined') {
    return { webhookId, outcome: 'not_quarantined', message: error.message };
  }
  return { webhookId, outcome: 'failed', error };
}

/** "Release" (asks first) and "Discard…" (asks for a reason) for one quarantined webhook. */
export function QuarantineButtons({
  webhookId,
  done,
}: {
  webhookId: string;
  done: (answer: QuarantineAnswer) => void;
}) {
  const [discarding, setDiscarding] = useState(false);
  if (discarding) {
    return (
      <DiscardForm
        webhookId={webhookId}
        cancel={() => setDiscarding(false)}
        done={(answer) => {
          setDiscarding(false);
          done(answer);
        }}
      />
    );
  }
  return (
    <div class="buttons">
      <ConfirmButton
        label="Release"
        question="Validate it again under the running schema and, if it passes, run its actions?"
        confirmLabel="Release it"
        action={async () => done(await release(webhookId))}
      />
      <button type="button" onClick={() => setDiscarding(true)}>
        Discard…
      </button>
    </div>
  );
}

function DiscardForm({
  webhookId,
  cancel,
  done,
}: {
  webhookId: string;
  cancel: () => void;
  done: (answer: QuarantineAnswer) => void;
}) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const text = reason.trim();
  return (
    <form
      class="discard"
      onSubmit={(event) => {
        event.preventDefault();
        setBusy(true);
        void discard(webhookId, text).then(done);
      }}
    >
      <label>
        Why discard it? (kept in the audit log)
        <input
          ref={field}
          name="reason"
          required
          maxLength={REASON_MAX}
          value={reason}
          onInput={(event) => setReason((event.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="danger" disabled={busy || text.length === 0}>
        Discard
      </button>
      <button type="button" onClick={cancel}>
        Cancel
      </button>
    </form>
  );
}

/** A release's or a discard's answer, naming the webhook when `named`. */
export function QuarantineAnswerView({
  answer,
  named,
}: {
  answer: QuarantineAnswer;
  named?: boolean;
}) {
  const who = named ? (
    <>
      <WebhookLink id={answer.webhookId} />:{' '}
    </>
  ) : null;
  switch (answer.outcome) {
    case 'released':
      return (
        <p role="status">
          {who}Released: {describeActions(answer.actions)}.
        </p>
      );
    case 'discarded':
      return <p role="status">{who}Discarded.</p>;
    case 'still_invalid':
      return (
        <div class="error" role="alert">
          <p>{who}Still invalid under the running schema:</p>
          <ProblemList problems={answer.problems} />
        </div>
      );
    case 'not_quarantined':
      return (
        <p role="status">
          {who}
          {answer.message}
        </p>
      );
    case 'failed':
      return <ErrorBox error={answer.error} />;
  }
}

const describeActions = (actions: readonly string[]) =>
  actions.length === 0 ? 'no action to run' : `actions ${actions.join(', ')}`;
