import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CircuitView } from '@pw/shared/circuits';

/** The worker's Prometheus metrics, on a registry of its own. */
export class WorkerMetrics {
  readonly registry: Registry;
  readonly actions: Counter<'action' | 'outcome'>;
  readonly actionSeconds: Histogram<'action'>;
  readonly tokenRequests: Counter<'outcome'>;
  readonly actionsThrottled: Counter<'action'>;
  readonly circuitOpen: Gauge<'target'>;
  readonly circuitChanges: Counter<'target' | 'change'>;
  readonly actionsHeld: Counter<'action'>;
  readonly actionsWaitingTurn: Counter<'action'>;
  readonly poisonInputs: Counter<'target' | 'action'>;
  /** Reads the circuits of this worker's targets at each scrape (shared state, in Redis). */
  private circuits: (() => Promise<CircuitView[]>) | undefined;

  constructor(registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    this.actions = new Counter({
      name: 'actions_total',
      help: 'Action attempts by action and outcome (completed, retrying, failed, skipped_stale, skipped_disabled)',
      labelNames: ['action', 'outcome'],
      registers,
    });
    this.actionSeconds = new Histogram({
      name: 'action_duration_seconds',
      help: 'Time an action attempt took, partner-API call included',
      labelNames: ['action'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.tokenRequests = new Counter({
      name: 'token_requests_total',
      help: 'Requests to the identity provider by outcome (success, failure)',
      labelNames: ['outcome'],
      registers,
    });
    this.actionsWaitingTurn = new Counter({
      name: 'actions_waiting_turn_total',
      help: 'Times an action waited its turn: a call of it for the same entity was in flight (no attempt spent)',
      labelNames: ['action'],
      registers,
    });
    this.actionsThrottled = new Counter({
      name: 'actions_throttled_total',
      help: 'Times an action waited for its rate_limit or max_concurrent slot in ACTIONS_CONFIG',
      labelNames: ['action'],
      registers,
    });
    const circuits = () => this.circuits?.();
    this.circuitOpen = new Gauge({
      name: 'partner_circuit_open',
      help: "1 while a partner target's circuit is open (its actions held), else 0; shared by every worker",
      labelNames: ['target'],
      registers,
      async collect() {
        // Redis away: the last values stay (the scrape still answers).
        const views = await circuits()?.catch(() => undefined);
        for (const view of views ?? [])
          this.set({ target: view.target }, view.state === 'open' ? 1 : 0);
      },
    });
    this.circuitChanges = new Counter({
      name: 'partner_circuit_changes_total',
      help: 'Circuit state changes made by this worker process, by target and change: opened (retryable failures in a row across inputs), reopened (a failure right after a close), closed (a 2xx)',
      labelNames: ['target', 'change'],
      registers,
    });
    this.actionsHeld = new Counter({
      name: 'actions_held_total',
      help: "Times an action was held, without spending an attempt, because its target's circuit was open",
      labelNames: ['action'],
      registers,
    });
    this.poisonInputs = new Counter({
      name: 'partner_poison_inputs_total',
      help: 'Actions judged poison inputs (a retryable failure while their target served other calls): released from the circuit, their failures no longer count and they spend their attempts',
      labelNames: ['target', 'action'],
      registers,
    });
  }

  /** Where `partner_circuit_open` reads the circuits from. */
  watchCircuits(read: () => Promise<CircuitView[]>): void {
    this.circuits = read;
  }
}
