import { keys, luaCommand, OUTCOME_CHANGE_CONSTANTS, SHARED_LUA, withCommand } from '@pw/shared';
import type { OutcomeStore, RedisClient } from '@pw/shared';
import { admissionOf } from './circuit-breaker.js';
import type { Admission, CircuitBreaker, EnterReply } from './circuit-breaker.js';
import {
  CIRCUIT_ENTER_ARGS,
  CIRCUIT_ENTER_KEYS,
  RELEASED_AFTER_FAILED_PROBES,
} from './circuit-scripts.js';
import { WORKER_LUA } from './lua/lua-files.js';

/**
 * The start of an action's try in one command (lua/action-start-9.lua): the out-of-order check,
 * the circuit's admission and the call's start in the outcome record, as `OutcomeStore.started`
 * does. `circuitEnter`'s keys and arguments follow the entity's key and ARGV[1..2].
 */
const ACTION_START = luaCommand({
  name: 'pwActionStart',
  file: 'action-start-9.lua',
  sources: [WORKER_LUA, SHARED_LUA],
  constants: {
    ...OUTCOME_CHANGE_CONSTANTS,
    RELEASED_AFTER_FAILED_PROBES,
    ENTER_KEYS_END: 1 + CIRCUIT_ENTER_KEYS,
    ENTER_ARGS_END: 2 + CIRCUIT_ENTER_ARGS,
  },
});

interface StartCommands {
  pwActionStart(...args: (string | number)[]): Promise<[string, number?, number?, number?]>;
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
}

/** A try's start: stale, or the circuit's admission and whether the call was counted started. */
export type StartResult =
  { stale: true } | { stale: false; admission: Admission; started: boolean };

export class ActionStart {
  private readonly redis: RedisClient & StartCommands;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    private readonly circuits: CircuitBreaker,
    private readonly outcomes: OutcomeStore,
  ) {
    this.redis = withCommand<StartCommands>(redis, ACTION_START);
  }

  async begin(start: TryStart): Promise<StartResult> {
    const enter = this.circuits.enterCommand(start.circuit, start.jobId, start.order);
    const change = this.outcomes.startedCommand(start.webhookId, start.action);
    const [kind, n, newly, started] = await this.redis.pwActionStart(
      keys.latest(this.prefix, start.eventType, start.entityId ?? ''),
      ...enter.keys,
      ...change.keys,
      start.staleAfter ?? '',
      start.start ? '1' : '0',
      ...enter.args,
      ...change.args,
    );
    if (kind === 'stale') return { stale: true };
    return {
      stale: false,
      admission: admissionOf([kind, n ?? 0, newly] as EnterReply),
      started: started === 1,
    };
  }
}
