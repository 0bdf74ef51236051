import { luaCommand, OUTCOME_CHANGE_CONSTANTS, SHARED_LUA, withCommand } from '@pw/shared/lua';
import { keys } from '@pw/shared/queue';
import type { OutcomeStore } from '@pw/shared/outcomes';
import type { RedisClient } from '@pw/shared/runtime';
import type { Admission, CircuitBreaker } from './circuit-breaker.js';
import type { CircuitCopy } from './circuit-copy.js';
import type { EntityTurns, Turn } from './entity-turns.js';
import { WORKER_LUA } from './lua/lua-files.js';

/**
 * The start of an action's try in its webhook's partition (lua/action-start-4.lua): the
 * out-of-order check and the call's start in the outcome record, as `OutcomeStore.started` does.
 */
const ACTION_START = luaCommand({
  name: 'pwActionStart',
  file: 'action-start-4.lua',
  sources: [WORKER_LUA, SHARED_LUA],
  constants: OUTCOME_CHANGE_CONSTANTS,
});

interface StartCommands {
  /** 'stale', 'fresh', or the action's attempts counted with the call's start (0: no record). */
  pwActionStart(...args: (string | number)[]): Promise<'stale' | 'fresh' | number>;
}

/** What one action's try is about to do. */
export interface TryStart {
  webhookId: string;
  action: string;
  eventType: string;
  entityId: string | undefined;
  /** The event's time (epoch ms) when the action is skipped if a newer event came first. */
  staleAfter: number | undefined;
  /** The circuit's name, the job's id and its order in the circuit's line (creation time). */
  circuit: string;
  jobId: string;
  order: number;
  /** Count the call as started when the circuit lets it through (nothing else comes first). */
  start: boolean;
  /**
   * The call comes after a wait of its own (its entity's turn), so it is not counted at its start;
   * on a first start through a clean circuit it is counted at its end, as any first call.
   */
  countAtEnd?: boolean;
  /**
   * The entity's turn the call needs, when nothing else is waited for before it (no slot): on a
   * first start through a clean circuit it is taken in the out-of-order check's command.
   */
  turn?: Turn;
  /**
   * The job's first start (`attemptsStarted` 1): it never failed, was never held, never waited
   * and never stalled, so it has no failures against the target and no place in its line.
   */
  firstStart?: boolean;
  /**
   * The job stalled before (`stalledCounter` > 0): a first try whose worker stopped during its
   * call may have left it uncounted (see `countsAtEnd`), so a start finding no attempt counted
   * for the action counts that one too.
   */
  stalled?: boolean;
}

/**
 * A try's start: stale, or the circuit's admission and, when the call was counted started, the
 * action's attempts with it (`counted`; 0 when it was not, or the record is gone).
 * `countsAtEnd`: nothing was written, and the call, when made, is counted by the change that
 * records its end (a first try through a clean circuit: one write per try). `turnWait`, when the
 * start took the turn's look (`TryStart.turn`): 0 when the turn is the job's, else the ms to wait
 * for it; without it the turn is still to be taken.
 */
export type StartResult =
  | { stale: true }
  | {
      stale: false;
      admission: Admission;
      counted: number;
      countsAtEnd: boolean;
      turnWait?: number;
    };

/** A call through a closed and clean circuit: nothing to report unless it fails. */
const UNTRACKED: Admission = { kind: 'call', tracked: false, report: false };

/**
 * The start of a try: out-of-order check, the circuit's admission, the call's start in the record.
 * The circuit lives on the shared keys and the rest in the webhook's partition (two slots in a
 * Redis Cluster), so they are two commands; a job's first start on a circuit this process's copy
 * knows closed and clean needs no circuit command and writes nothing to the record: a read for the
 * check (for a state-changing action, the entity's turn taken in the same command), and the call
 * counted by the change that records its end (docs/reliability-and-security.md, the circuit
 * breaker; docs/architecture.md, Order; docs/redis-cost.md).
 */
export class ActionStart {
  private readonly redis: RedisClient & StartCommands;

  constructor(
    redis: RedisClient,
    /** The partition's prefix: its entities' newest times and outcome records. */
    private readonly prefix: string,
    private readonly circuits: CircuitBreaker,
    private readonly outcomes: OutcomeStore,
    private readonly copy?: CircuitCopy,
    private readonly turns?: EntityTurns,
  ) {
    this.redis = withCommand<StartCommands>(redis, ACTION_START);
  }

  async begin(start: TryStart): Promise<StartResult> {
    if (start.firstStart && this.copy?.clean(start.circuit)) {
      // Nothing written to the record: the out-of-order check (with the entity's turn, one
      // command), and the call counted at its end.
      const countsAtEnd = start.start || Boolean(start.countAtEnd);
      if (start.turn && this.turns) {
        const turnWait = await this.turns.take(start.turn, start.staleAfter);
        if (turnWait === 'stale') return { stale: true };
        return { stale: false, admission: UNTRACKED, counted: 0, countsAtEnd, turnWait };
      }
      if (start.staleAfter !== undefined && (await this.newest(start)) > start.staleAfter) {
        return { stale: true };
      }
      return { stale: false, admission: UNTRACKED, counted: 0, countsAtEnd };
    }
    // The check first: a stale job is skipped, never held or made the probe.
    if (start.staleAfter !== undefined) {
      if ((await this.inPartition(start, start.staleAfter, false)) === 'stale') {
        return { stale: true };
      }
    }
    const admission = await this.circuits.enter(start.circuit, start.jobId, start.order);
    const through = admission.kind === 'call' || admission.kind === 'probe';
    if (!start.start || !through) {
      return { stale: false, admission, counted: 0, countsAtEnd: false };
    }
    const begun = await this.inPartition(start, undefined, true);
    const counted = typeof begun === 'number' ? begun : 0;
    return { stale: false, admission, counted, countsAtEnd: false };
  }

  /** The time of the entity's newest event (epoch ms), -1 when none is kept. */
  private async newest(start: TryStart): Promise<number> {
    const kept = await this.redis.get(
      keys.latest(this.prefix, start.eventType, start.entityId ?? ''),
    );
    return kept === null ? -1 : Number(kept);
  }

  /** The check (with `staleAfter`) and the start (`start`) in the partition; one command. */
  private async inPartition(
    start: TryStart,
    staleAfter: number | undefined,
    begin: boolean,
  ): Promise<'stale' | 'fresh' | number> {
    if (staleAfter === undefined && !begin) return 'fresh';
    const change = this.outcomes.startedCommand(start.webhookId, start.action);
    return this.redis.pwActionStart(
      keys.latest(this.prefix, start.eventType, start.entityId ?? ''),
      ...change.keys,
      staleAfter ?? '',
      begin ? '1' : '0',
      start.stalled ? `${start.action}:attempts` : '',
      ...change.args,
    );
  }
}
