// The audit log: every operator change, newest first, who made it and when.
import { api, query } from '../api.js';
import type { AuditPage as EntryPage } from '../api.js';
import { href } from '../router.js';
import { Columns, Show, Time, useLoad, WebhookLink } from '../ui.js';

export function AuditPage({ params }: { params: URLSearchParams }) {
  const cursor = params.get('cursor') ?? undefined;
  const [loaded] = useLoad(
    () => api<EntryPage>(`/audit${query({ limit: '50', cursor })}`),
    params.toString(),
  );
  return (
    <section>
      <h1>Audit log</h1>
      <Show loaded={loaded}>
        {({ entries, next_cursor: next }) => (
          <>
            {entries.length === 0 ? (
              <p class="muted">No operator change yet.</p>
            ) : (
              <div class="scroll">
                <table class="audit">
                  <Columns names={['When', 'Who', 'What', 'Target', 'Details']} />
                  <tbody>
                    {entries.map((entry, index) => (
                      <tr key={`${entry.at}-${index}`}>
                        <td>
                          <Time at={entry.at} />
                        </td>
                        <td>{entry.user}</td>
                        <td>{entry.action}</td>
                        <td>
                          <Target target={entry.target} />
                        </td>
                        <td>
                          <code class="details">{JSON.stringify(entry.details)}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {next && (
              <a class="button" href={href('/audit', { cursor: next })} rel="next">
                Older entries
              </a>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

/** A webhook target links to its page; others (rules, a circuit, a job) are shown as they are. */
function Target({ target }: { target: string }) {
  if (/^wh_[A-Za-z0-9_-]{22}$/.test(target)) {
    return <WebhookLink id={target} />;
  }
  return <code>{target}</code>;
}
