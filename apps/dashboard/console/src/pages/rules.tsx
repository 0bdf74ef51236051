// The routing rules: edited as JSON, validated by the API (which refuses them whole, each error
// at its path), and previewed on an event before they are saved.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { JsonField } from '../fields.js';
import { ErrorBox, Show, Time, useLoad } from '../ui.js';

interface RulesDocument {
  rules: unknown[];
  updated_at: string | null;
  updated_by: string | null;
}

const SAMPLE_EVENT = {
  event_type: 'quote.status_changed',
  quote_id: 'Q-123',
  status: 'approved',
  customer_id: 'C-42',
  metadata: { market: 'FR' },
};

export function RulesPage() {
  const [loaded, reload] = useLoad(() => api<RulesDocument>('/rules'), 'rules');
  return (
    <section>
      <h1>Routing rules</h1>
      <Show loaded={loaded}>
        {(document) => <RulesEditor document={document} saved={reload} />}
      </Show>
    </section>
  );
}

/** The editor's text as JSON; a syntax error is reported like the API's own refusals. */
function parse(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `The ${what} is not JSON: ${(error as Error).message}`);
  }
}

function RulesEditor({ document, saved }: { document: RulesDocument; saved: () => void }) {
  const [text, setText] = useState(() => JSON.stringify(document.rules, null, 2));
  const [saveState, setSaveState] = useState<{ error?: Error; savedAt?: string }>({});
  useEffect(() => setText(JSON.stringify(document.rules, null, 2)), [document]);

  const save = async () => {
    try {
      const stored = await api<RulesDocument>('/rules', {
        method: 'PUT',
        body: { rules: parse(text, 'rules document') },
      });
      setSaveState({ savedAt: stored.updated_at ?? new Date().toISOString() });
      saved();
    } catch (error) {
      setSaveState({ error: error as Error });
    }
  };

  return (
    <>
      <p class="muted">
        Last changed <Time at={document.updated_at} />
        {document.updated_by ? ` by ${document.updated_by}` : ' (the configured rules)'}. Each rule:{' '}
        <code>{'{ event_type, action, enabled, when: [{ path, equals | in | exists }] }'}</code>.
      </p>
      <JsonField label="Rules (JSON)" name="rules" rows={18} value={text} onChange={setText} />
      <div class="panel">
        <button type="button" onClick={() => void save()}>
          Validate and save
        </button>
        {saveState.savedAt && (
          <p role="status">
            Saved: every ingress uses these rules now (<Time at={saveState.savedAt} />
            ).
          </p>
        )}
        {saveState.error && <ErrorBox error={saveState.error} />}
      </div>
      <Preview rulesText={text} />
    </>
  );
}

function Preview({ rulesText }: { rulesText: string }) {
  const [eventText, setEventText] = useState(() => JSON.stringify(SAMPLE_EVENT, null, 2));
  const [result, setResult] = useState<{ actions?: string[]; error?: Error }>({});
  const preview = async () => {
    try {
      const answer = await api<{ actions: string[] }>('/rules/preview', {
        method: 'POST',
        body: { rules: parse(rulesText, 'rules document'), event: parse(eventText, 'event') },
      });
      setResult({ actions: answer.actions });
    } catch (error) {
      setResult({ error: error as Error });
    }
  };
  return (
    <>
      <h2>Preview</h2>
      <p class="muted">Paste an event: see which actions the rules above would set off.</p>
      <JsonField
        label="Event (JSON)"
        name="event"
        rows={10}
        value={eventText}
        onChange={setEventText}
      />
      <div class="panel" aria-live="polite">
        <button type="button" onClick={() => void preview()}>
          Preview
        </button>
        {result.actions && (
          <p role="status" class="preview-result">
            {result.actions.length === 0
              ? 'No action would run.'
              : `Would run: ${result.actions.join(', ')}`}
          </p>
        )}
        {result.error && <ErrorBox error={result.error} />}
      </div>
    </>
  );
}
