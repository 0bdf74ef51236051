// Each partner target's circuit: open or closed, since when, the actions it holds; opened or
// closed by hand.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { CircuitView } from '../api.js';
import { Badge, Columns, ConfirmButton, ErrorBox, Show, Time, useLoad } from '../ui.js';

/** Opens or closes a target's circuit by hand. */
type Override = (target: string, state: 'open' | 'closed') => Promise<void>;

export function CircuitsPage() {
  const [loaded, reload] = useLoad(
    () => api<{ circuits: CircuitView[] }>('/circuits'),
    'circuits',
    3000,
  );
  const [error, setError] = useState<Error>();
  const override: Override = async (target, state) => {
    try {
      await api(`/circuits/${encodeURIComponent(target)}`, { method: 'PUT', body: { state } });
      setError(undefined);
      reload();
    } catch (failure) {
      setError(failure as Error);
    }
  };
  return (
    <section>
      <h1>Circuits</h1>
      <p class="muted">
        A circuit opens after repeated retryable failures of a partner target: its actions wait,
        without spending attempts, and one probe call goes through now and then. Opened by hand, it
        holds them until closed by hand.
      </p>
      {error && <ErrorBox error={error} />}
      <Show loaded={loaded}>
        {({ circuits }) =>
          circuits.length === 0 ? (
            <p class="muted">No target has been called yet.</p>
          ) : (
            <CircuitTable circuits={circuits} override={override} />
          )
        }
      </Show>
    </section>
  );
}

function CircuitTable({ circuits, override }: { circuits: CircuitView[]; override: Override }) {
  return (
    <div class="scroll">
      <table>
        <Columns
          names={['Target', 'State', 'Since', 'Failures in a row', 'Held actions', 'Change']}
        />
        <tbody>
          {circuits.map((circuit) => (
            <CircuitRow key={circuit.target} circuit={circuit} override={override} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CircuitRow({ circuit, override }: { circuit: CircuitView; override: Override }) {
  return (
    <tr>
      <td>
        <code>{circuit.target}</code>
      </td>
      <td>
        <Badge state={circuit.state} />
        {circuit.manual && <span class="muted"> (by hand)</span>}
      </td>
      <td>
        <Time at={circuit.since} />
      </td>
      <td>{circuit.consecutive_failures}</td>
      <td class="held-count">{circuit.held_actions}</td>
      <td>
        {circuit.state === 'open' ? (
          <ConfirmButton
            label="Close"
            question="Close it? Held actions run at once."
            confirmLabel="Close circuit"
            action={() => override(circuit.target, 'closed')}
          />
        ) : (
          <ConfirmButton
            label="Open"
            question="Open it? Its actions are held until you close it."
            confirmLabel="Open circuit"
            action={() => override(circuit.target, 'open')}
          />
        )}
      </td>
    </tr>
  );
}
