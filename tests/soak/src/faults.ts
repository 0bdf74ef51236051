// The faults of a soak, on a schedule over its sending time: each kind of process killed with
// SIGKILL and started again, Redis killed and started again from its append-only file, PostgreSQL
// unreachable, the partner failing in four ways for stretches, the identity provider down.
import type { SoakSystem } from './system.js';

export const FAULTS = [
  'kill-ingress',
  'kill-worker',
  'kill-recorder',
  'kill-dashboard',
  'kill-redis',
  'postgres-down',
  'partner-5xx',
  'partner-429',
  'partner-timeout',
  'partner-reset',
  'idp-down',
] as const;
export type FaultName = (typeof FAULTS)[number];

/** A fault as it happened. */
export interface FaultRecord {
  fault: FaultName;
  started_at: string;
  ended_at: string;
  /** What was done, in a few words. */
  detail: string;
}

/** How long the outages last in a run long enough for them (seconds). */
const FULL_SECONDS = { postgres: 60, idp: 30, partner: 20 };

export interface Schedule {
  /** Each fault's start, in ms from the start of sending, in order. */
  steps: { at: number; fault: FaultName }[];
  /** How long the outages last here (seconds): the full ones, shortened for a short run. */
  seconds: { postgres: number; idp: number; partner: number };
}

/**
 * Every fault in `faults` `rounds` times, spread evenly over 5-80 % of `sendSeconds` (so the
 * last ones end while events still arrive); outages as long as a run of this length allows: the
 * full ones from about 6 minutes of sending, a sixth of it each in a shorter run.
 */
export function schedule(faults: readonly FaultName[], sendSeconds: number): Schedule {
  const rounds = Math.max(1, Math.floor(sendSeconds / 600));
  const cap = Math.max(3, Math.floor(sendSeconds / 6));
  const seconds = {
    postgres: Math.min(FULL_SECONDS.postgres, cap),
    idp: Math.min(FULL_SECONDS.idp, cap),
    partner: Math.min(FULL_SECONDS.partner, cap),
  };
  const order = Array.from({ length: rounds }, () => faults).flat();
  const span = sendSeconds * 1000 * 0.75;
  const steps = order.map((fault, index) => ({
    at: Math.round(sendSeconds * 1000 * 0.05 + (span * index) / Math.max(1, order.length)),
    fault,
  }));
  return { steps, seconds };
}

const PARTNER = /./;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Does one fault and resolves once it is over (the process back, the outage ended). */
async function inflict(
  system: SoakSystem,
  fault: FaultName,
  seconds: Schedule['seconds'],
  round: number,
): Promise<string> {
  const kill = async (kind: 'ingress' | 'worker' | 'recorder' | 'dashboard') => {
    const candidates = system.apps.filter((app) => app.kind === kind);
    const app = candidates[round % candidates.length]!;
    await system.restart(app);
    return `${kind} #${app.index + 1} killed (SIGKILL) and started again`;
  };
  const api = system.sandbox.api;
  const partnerMs = seconds.partner * 1000;
  switch (fault) {
    case 'kill-ingress':
      return kill('ingress');
    case 'kill-worker':
      return kill('worker');
    case 'kill-recorder':
      return kill('recorder');
    case 'kill-dashboard':
      return kill('dashboard');
    case 'kill-redis':
      await system.restartRedis();
      return 'redis-server killed (SIGKILL) and started again from its append-only file';
    case 'postgres-down':
      system.postgres.cut();
      await sleep(seconds.postgres * 1000);
      system.postgres.mend();
      return `PostgreSQL unreachable for ${seconds.postgres} s`;
    case 'partner-5xx':
      api.failNext({ path: PARTNER, status: 503, forMs: partnerMs });
      await sleep(partnerMs);
      return `partner answered 503 for ${seconds.partner} s`;
    case 'partner-429':
      api.failNext({ path: PARTNER, status: 429, retryAfter: 2, forMs: partnerMs });
      await sleep(partnerMs);
      return `partner answered 429 with Retry-After: 2 for ${seconds.partner} s`;
    case 'partner-timeout':
      // Applied, then answered after the worker's time-out (API_TIMEOUT_MS 2000): lost answers.
      api.failNext({
        path: PARTNER,
        status: 200,
        kind: 'timeout',
        delayMs: 3000,
        forMs: partnerMs,
      });
      await sleep(partnerMs);
      return `partner applied calls and answered too late (time-outs) for ${seconds.partner} s`;
    case 'partner-reset':
      api.failNext({ path: PARTNER, status: 0, kind: 'reset', forMs: partnerMs });
      await sleep(partnerMs);
      return `partner reset connections for ${seconds.partner} s`;
    case 'idp-down':
      await system.sandbox.idp.pause();
      await sleep(seconds.idp * 1000);
      await system.sandbox.idp.resume();
      return `identity provider down for ${seconds.idp} s`;
  }
}

/**
 * Runs the schedule from `start` (performance.now() of the first send), each fault at its time
 * whether or not the one before is over (outages may overlap, as they do), and resolves with what
 * happened once the last is over.
 */
export async function runFaults(
  system: SoakSystem,
  plan: Schedule,
  start: number,
  log: (line: string) => void,
): Promise<FaultRecord[]> {
  const done: FaultRecord[] = [];
  const running: Promise<void>[] = [];
  const rounds = new Map<FaultName, number>();
  for (const step of plan.steps) {
    const wait = start + step.at - performance.now();
    if (wait > 0) await sleep(wait);
    const round = rounds.get(step.fault) ?? 0;
    rounds.set(step.fault, round + 1);
    const startedAt = new Date();
    log(`${startedAt.toISOString()} fault ${step.fault}`);
    running.push(
      inflict(system, step.fault, plan.seconds, round).then((detail) => {
        const record = {
          fault: step.fault,
          started_at: startedAt.toISOString(),
          ended_at: new Date().toISOString(),
          detail,
        };
        log(`${record.ended_at} over: ${detail}`);
        done.push(record);
      }),
    );
  }
  await Promise.all(running);
  return done.sort((a, b) => a.started_at.localeCompare(b.started_at));
}
