// Each partner target's circuit: open or closed and why, since when, the actions it holds, the
// inputs it judges poison; opened or closed by hand.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { CircuitView, SenderClock } from '../api.js';
import { href } from '../router.js';
import {
  Badge,
  Columns,
  ConfirmButton,
  ErrorBox,
  plural,
  Show,
  Time,
  useLoad,
  WebhookLink,
} from '../ui.js';

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
        holds them until closed by hand. An input the partner fails while it serves others is
        poison: it does not count towards the circuit, and it spends its attempts.
      </p>
      {error && <ErrorBox error={error} />}
      <Show loaded={loaded}>
        {({ circuits }) =>
          circuits.length === 0 ? (
            <p class="muted">No target has been called yet.</p>
          ) : (
            <>
              <CircuitTable circuits={circuits} override={override} />
              {circuits
                .filter((circuit) => circuit.poison_inputs > 0)
                .map((circuit) => (
                  <PoisonInputs key={circuit.target} circuit={circuit} />
                ))}
            </>
          )
        }
      </Show>
      <SenderClocks />
    </section>
  );
}

/** A clock offset as people read it: `120.0 s ahead`, `3.2 s behind`, `in step`. */
function offsetText(offsetMs: number): string {
  if (Math.abs(offsetMs) < 50) return 'in step';
  return `${(Math.abs(offsetMs) / 1000).toFixed(1)} s ${offsetMs < 0 ? 'ahead' : 'behind'}`;
}

/** Each sender's clock as the ingress estimates it: events are ordered on it. */
function SenderClocks() {
  const [loaded] = useLoad(
    () => api<{ senders: SenderClock[] }>('/sender-clocks'),
    'clocks',
    10_000,
  );
  return (
    <>
      <h2>Sender clocks</h2>
      <p class="muted">
        How far each sender&apos;s clock runs from this system&apos;s, as the ingress estimates it
        from the sender&apos;s recent events (the median of arrival minus timestamp). An
        entity&apos;s events are ordered by their timestamp read on that clock.
      </p>
      <Show loaded={loaded}>
        {({ senders }) =>
          senders.length === 0 ? (
            <p class="muted">No sender&apos;s clock is known yet.</p>
          ) : (
            <div class="scroll">
              <table aria-label="Sender clocks">
                <Columns names={['Sender', 'Its clock', 'From events', 'Estimated']} />
                <tbody>
                  {senders.map((clock) => (
                    <tr key={clock.sender}>
                      <td>{clock.sender || '(no partner_id)'}</td>
                      <td>{offsetText(clock.offset_ms)}</td>
                      <td>{clock.samples}</td>
                      <td>
                        <Time at={clock.at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </>
  );
}

function CircuitTable({ circuits, override }: { circuits: CircuitView[]; override: Override }) {
  return (
    <div class="scroll">
      <table>
        <Columns
          names={[
            'Target',
            'State',
            'Since',
            'Failures in a row',
            'Held actions',
            'Poison inputs',
            'Change',
          ]}
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
        {circuit.recovering && (
          <>
            {' '}
            <Badge state="recovering" />
          </>
        )}
        <Why circuit={circuit} />
      </td>
      <td>
        <Time at={circuit.since} />
      </td>
      <td>{circuit.consecutive_failures}</td>
      <td class="held-count">{circuit.held_actions}</td>
      <td class="poison-count">{circuit.poison_inputs}</td>
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

/** Why it is open, or what recovering means, in words; nothing for a closed circuit at rest. */
function Why({ circuit }: { circuit: CircuitView }) {
  const failures = circuit.consecutive_failures;
  const words =
    circuit.reason === 'failures'
      ? `${failures > 0 ? `${failures} ` : ''}retryable failures in a row across inputs`
      : circuit.reason === 'reopened'
        ? 'reopened: a call failed right after a close'
        : circuit.reason === 'manual'
          ? 'opened by an operator'
          : circuit.recovering
            ? 'just closed: one retryable failure before another call succeeds reopens it'
            : null;
  return words ? <div class="muted why">{words}</div> : null;
}

/** The inputs a circuit judges poison: how many, and the newest with links to their webhooks. */
function PoisonInputs({ circuit }: { circuit: CircuitView }) {
  const shown = circuit.poison.length;
  return (
    <section class="poison">
      <h2>
        Poison inputs of <code>{circuit.target}</code>
      </h2>
      <p class="muted">
        {plural(circuit.poison_inputs, 'input')} the partner failed with a retryable status while it
        served others
        {shown < circuit.poison_inputs ? `; the newest ${shown}` : ''}. Each spends its attempts and
        ends in the dead letters if it never succeeds.
      </p>
      <div class="scroll">
        <table>
          <Columns names={['Webhook', 'Action', 'Judged poison']} />
          <tbody>
            {circuit.poison.map((input) => (
              <tr key={`${input.webhook_id}.${input.action}`}>
                <td>
                  <WebhookLink id={input.webhook_id} />
                </td>
                <td>
                  <a
                    href={href('/dead-letters', { action: input.action })}
                    title={`Dead letters of ${input.action}`}
                  >
                    {input.action}
                  </a>
                </td>
                <td>
                  <Time at={input.since} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
