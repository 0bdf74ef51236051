// The faults of a soak, on a schedule over its sending time: each kind of process killed with
// SIGKILL and started again, Redis killed and started again from its append-only file, PostgreSQL
// unreachable, the partner failing everything in five ways for stretches (one of them while its
// front refuses odd paths at once), a burst of poison events, bursts of one entity's events out of
// order, the identity provider down.
import type { Failure } from '@pw/sandbox';
import type { FaultEvents } from './fault-events.js';
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
  'gateway-404',
  'poison-burst',
  'entity-burst',
  'idp-down',
] as const;
export type FaultName = (typeof FAULTS)[number];

/** A stretch of time the partner failed every call (but those its front refused at once). */
export interface Stretch {
  from: string;
  until: string;
  ms: number;
}

/** A fault as it happened. */
export interface FaultRecord {
  fault: FaultName;
  started_at: string;
  ended_at: string;
  /** What was done, in a few words. */
  detail: string;
  /** For a partner outage: the stretch the stand-in failed everything. */
  stretch?: Stretch;
}

/** `entity-burst`: this many quotes, each this many events sent at once in a shuffled order. */
const ENTITY_BURSTS = { quotes: 8, events: 5 };

/** Quotes of the poison customer sent at once by `poison-burst`. */
export const POISON_BURST = 40;
/** The longest ordinary quotes trickle in after a poison burst, one a second, for it to end (ms). */
const TRICKLE_AT_MOST_MS = 120_000;
/** How often `gateway-404` sends an odd-path event during its outage (ms). */
const ODD_PATH_EVERY_MS = 2000;

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

/** What a fault did: a few words, and the partner's outage stretch if it was one. */
interface Inflicted {
  detail: string;
  stretch?: Stretch;
}

/**
 * The partner stand-in failing every call as `failure` says for `ms`, from now; `during` runs
 * meanwhile. Resolves once the stretch is over.
 */
async function outage(
  system: SoakSystem,
  failure: Omit<Failure, 'forMs' | 'path'>,
  ms: number,
  during?: (until: number) => Promise<string>,
): Promise<Inflicted & { stretch: Stretch }> {
  const until = system.sandbox.api.failNext({ path: PARTNER, ...failure, forMs: ms });
  const from = until - ms;
  const detail = (await during?.(until)) ?? '';
  await sleep(until - Date.now());
  const stretch = {
    from: new Date(from).toISOString(),
    until: new Date(until).toISOString(),
    ms,
  };
  return { detail, stretch };
}

/** One odd-path event every `ODD_PATH_EVERY_MS` from 1 s into the outage to 1 s before its end. */
async function oddPaths(events: FaultEvents, until: number): Promise<string> {
  let sent = 0;
  for (let at = Date.now() + 1000; at < until - 1000; at += ODD_PATH_EVERY_MS) {
    await sleep(at - Date.now());
    events.oddPath();
    sent += 1;
  }
  return `, its front answering 404 at once to ${sent} events whose customer_id holds a /`;
}

/**
 * Sends an ordinary quote a second until every poison event is final in the record store (or
 * `TRICKLE_AT_MOST_MS` has passed): the partner goes on serving others while the poison spends
 * its attempts, whether or not the soak's own traffic has ended. Says how long it trickled.
 */
async function trickleWhilePoisonRuns(system: SoakSystem, events: FaultEvents): Promise<string> {
  const start = Date.now();
  const took = () => `an ordinary quote a second for ${Math.round((Date.now() - start) / 1000)} s`;
  while (Date.now() - start < TRICKLE_AT_MOST_MS) {
    const final = await events.poisonFinal(system.storeUrl).catch(() => false);
    if (final) return `${took()}, until the poison was final`;
    events.trickle();
    await sleep(1000);
  }
  return `${took()}, and the poison was still not final`;
}

/** Does one fault and resolves once it is over (the process back, the outage ended). */
async function inflict(
  system: SoakSystem,
  events: FaultEvents,
  fault: FaultName,
  seconds: Schedule['seconds'],
  round: number,
): Promise<Inflicted> {
  const kill = async (kind: 'ingress' | 'worker' | 'recorder' | 'dashboard') => {
    const candidates = system.apps.filter((app) => app.kind === kind);
    const app = candidates[round % candidates.length]!;
    await system.restart(app);
    return { detail: `${kind} #${app.index + 1} killed (SIGKILL) and started again` };
  };
  const partnerMs = seconds.partner * 1000;
  const partnerDown = async (what: string, failure: Omit<Failure, 'forMs' | 'path'>) => {
    const { stretch } = await outage(system, failure, partnerMs);
    return { detail: `${what} for ${seconds.partner} s`, stretch };
  };
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
      return {
        detail: 'redis-server killed (SIGKILL) and started again from its append-only file',
      };
    case 'postgres-down':
      system.postgres.cut();
      await sleep(seconds.postgres * 1000);
      system.postgres.mend();
      return { detail: `PostgreSQL unreachable for ${seconds.postgres} s` };
    case 'partner-5xx':
      return partnerDown('partner answered 503', { status: 503 });
    case 'partner-429':
      return partnerDown('partner answered 429 with Retry-After: 2', {
        status: 429,
        retryAfter: 2,
      });
    case 'partner-timeout':
      // Applied, then answered after the worker's time-out (API_TIMEOUT_MS 2000): lost answers.
      return partnerDown('partner applied calls and answered too late (time-outs)', {
        status: 200,
        kind: 'timeout',
        delayMs: 3000,
      });
    case 'partner-reset':
      return partnerDown('partner reset connections', { status: 0, kind: 'reset' });
    case 'gateway-404': {
      const done = await outage(system, { status: 503 }, partnerMs, (until) =>
        oddPaths(events, until),
      );
      return { ...done, detail: `partner answered 503 for ${seconds.partner} s${done.detail}` };
    }
    case 'poison-burst': {
      events.poisonBurst(POISON_BURST);
      const trickled = await trickleWhilePoisonRuns(system, events);
      return {
        detail: `${POISON_BURST} quotes of customer ${events.poisonCustomer} sent at once, the partner answering 500 to every call about it; ${trickled}`,
      };
    }
    case 'entity-burst':
      for (let n = 0; n < ENTITY_BURSTS.quotes; n++) events.entityBurst(ENTITY_BURSTS.events);
      return {
        detail: `${ENTITY_BURSTS.quotes} quotes, each ${ENTITY_BURSTS.events} events dated a second apart sent at once in a shuffled order`,
      };
    case 'idp-down':
      await system.sandbox.idp.pause();
      await sleep(seconds.idp * 1000);
      await system.sandbox.idp.resume();
      return { detail: `identity provider down for ${seconds.idp} s` };
  }
}

/**
 * Runs the schedule from `start` (performance.now() of the first send), each fault at its time
 * whether or not the one before is over (outages may overlap, as they do), and resolves with what
 * happened once the last is over.
 */
export async function runFaults(
  system: SoakSystem,
  events: FaultEvents,
  plan: Schedule,
  start: number,
  log: (line: string) => void,
): Promise<FaultRecord[]> {
  // Before any outage, so that the poison's and the odd paths' failures take precedence.
  events.arm(system.sandbox.api);
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
      inflict(system, events, step.fault, plan.seconds, round).then(({ detail, stretch }) => {
        const record: FaultRecord = {
          fault: step.fault,
          started_at: startedAt.toISOString(),
          ended_at: new Date().toISOString(),
          detail,
          ...(stretch ? { stretch } : {}),
        };
        log(`${record.ended_at} over: ${detail}`);
        done.push(record);
      }),
    );
  }
  await Promise.all(running);
  return done.sort((a, b) => a.started_at.localeCompare(b.started_at));
}
