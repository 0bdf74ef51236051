// Releasing every quarantined webhook the filters match, on every page: a dry run counts what
// would pass the running schema, then a confirmation releases them.
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { BulkRelease as Released, ReleasePreview as DryRun } from '../api.js';
import { ConfirmButton, ErrorBox, plural, WebhookLink } from '../ui.js';

type Step =
  | { at: 'start' }
  | { at: 'counted'; dry: DryRun }
  | { at: 'released'; answer: Released }
  | { at: 'failed'; error: Error };

export function BulkRelease({
  filter,
  done,
}: {
  filter: Record<string, string | undefined>;
  /** Called with the webhooks that left the quarantine (the first 100 the answer names). */
  done: (webhookIds: string[]) => void;
}) {
  const [step, setStep] = useState<Step>({ at: 'start' });
  const count = async () => {
    try {
      const dry = await api<DryRun>(`/quarantine/release${query({ ...filter, dry_run: 'true' })}`, {
        method: 'POST',
      });
      setStep({ at: 'counted', dry });
    } catch (error) {
      setStep({ at: 'failed', error: error as Error });
    }
  };
  const release = async () => {
    try {
      const answer = await api<Released>(`/quarantine/release${query(filter)}`, {
        method: 'POST',
      });
      setStep({ at: 'released', answer });
      done(
        answer.webhooks
          .filter((webhook) => webhook.outcome !== 'still_invalid')
          .map((webhook) => webhook.webhook_id),
      );
    } catch (error) {
      setStep({ at: 'failed', error: error as Error });
    }
  };
  return (
    <div class="panel" aria-live="polite">
      {step.at === 'counted' ? (
        <Counted dry={step.dry} release={release} />
      ) : (
        <button type="button" onClick={() => void count()}>
          Count the quarantined webhooks to release
        </button>
      )}
      {step.at === 'released' && (
        <p role="status">
          Released {plural(step.answer.released, 'webhook')}: their actions are queued. Still
          invalid under the running schema, so still quarantined: {step.answer.still_invalid}.
          Already released or discarded: {step.answer.not_quarantined}.
        </p>
      )}
      {step.at === 'failed' && <ErrorBox error={step.error} />}
    </div>
  );
}

function Counted({ dry, release }: { dry: DryRun; release: () => Promise<void> }) {
  const invalid = dry.quarantined.filter((item) => !item.releasable);
  return (
    <>
      <p>
        Would pass the running schema and be released: {dry.would_release}. Still invalid, so would
        stay quarantined: {dry.still_invalid}.
      </p>
      {dry.would_release === 0 ? (
        <p>Nothing to release for these filters.</p>
      ) : (
        <ConfirmButton
          label={`Release ${plural(dry.would_release, 'webhook')}…`}
          question={`Release ${plural(dry.would_release, 'webhook')}? Each runs its actions.`}
          confirmLabel="Release them"
          action={release}
        />
      )}
      {invalid.length > 0 && (
        <details>
          <summary>
            Still invalid: {invalid.length}
            {dry.still_invalid > invalid.length ? ` among the first ${dry.quarantined.length}` : ''}
          </summary>
          <ul>
            {invalid.map((item) => (
              <li key={item.webhook_id}>
                <WebhookLink id={item.webhook_id} />
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}
