// A circuit as the operator API shows it, made from what the worker's breaker keeps in Redis
// (circuit-keys.ts); CircuitBoard reads the keys.
import { webhookIdOfJob } from '../queue/action-queues.js';
import type { CircuitOpenReason, CircuitState, CircuitView, PoisonInput } from './circuit-keys.js';

/** How many of the inputs judged poison a view lists, the newest. */
export const POISON_SHOWN = 20;

const REASONS: readonly CircuitOpenReason[] = ['failures', 'reopened', 'manual'];

/** Why an open circuit is open. An operator's hold says so whatever else the hash holds. */
function openReason(fields: Record<string, string>): CircuitOpenReason {
  if (fields.manual === '1') return 'manual';
  const reason = REASONS.find((known) => known === fields.reason);
  // Opened by a worker that did not say why: only failures in a row did that.
  return reason ?? 'failures';
}

/** `[member, score, member, score, …]` (ZREVRANGE … WITHSCORES) as the inputs it names. */
function poisonInputs(withScores: readonly string[]): PoisonInput[] {
  const inputs: PoisonInput[] = [];
  for (let i = 0; i + 1 < withScores.length; i += 2) {
    const jobId = withScores[i]!;
    const webhookId = webhookIdOfJob(jobId);
    inputs.push({
      webhook_id: webhookId,
      action: jobId.slice(webhookId.length + 1),
      since: new Date(Number(withScores[i + 1])).toISOString(),
    });
  }
  return inputs;
}

/** One circuit from its hash, the count of jobs it holds and its poison inputs. */
export function circuitView(
  target: string,
  fields: Record<string, string>,
  heldCount: number,
  poisonCount: number,
  poisonNewest: readonly string[],
): CircuitView {
  const time = (ms: string | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);
  const state: CircuitState = fields.state === 'open' ? 'open' : 'closed';
  const manual = fields.manual === '1';
  return {
    target,
    state,
    since: time(fields.since),
    consecutive_failures: Number(fields.failures ?? 0),
    held_actions: heldCount,
    manual,
    next_probe_at: state === 'open' && !manual ? time(fields.next_probe_at) : null,
    reason: state === 'open' ? openReason(fields) : null,
    recovering: state === 'closed' && fields.recovering === '1',
    poison_inputs: poisonCount,
    poison: poisonInputs(poisonNewest),
  };
}
