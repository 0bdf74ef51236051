import {
  admissionOf,
  CIRCUIT_ENTER_ARGS,
  CIRCUIT_ENTER_FUNCTION,
  CIRCUIT_ENTER_KEYS,
  keys,
  OUTCOME_CHANGE_FUNCTION,
  withCommand,
} from '@pw/shared';
import type {
  Admission,
  CircuitStore,
  EnterReply,
  LuaCommand,
  OutcomeStore,
  RedisClient,
} from '@pw/shared';

/** Where `circuitEnter`'s keys and arguments end: they follow the entity's key and ARGV[1..2]. */
const ENTER_KEYS_END = 1 + CIRCUIT_ENTER_KEYS;
const ENTER_ARGS_END = 2 + CIRCUIT_ENTER_ARGS;
/** The record's keys (`outcomeChange` takes 3). */
const OUTCOME_KEYS = 3;

/**
 * The start of an action's try, in one command instead of three round trips: the out-of-order
 * check, the circuit's admission, and (when asked, and the circuit lets the call through) the
 * call's start in the outcome record, so that a call is counted before it is made, as
 * `OutcomeStore.started` does.
 *
 * KEYS[1] the entity's newest event time, then the circuit's keys (`circuitEnter`), then the
 * record's keys (`outcomeChange`). ARGV[1] the event's time in ms ('': not checked), ARGV[2] '1'
 * to start the call, then `circuitEnter`'s arguments, then `outcomeChange`'s. Returns {'stale'}
 * when a newer event for the entity came first (nothing else done), else `circuitEnter`'s reply
 * {kind, n, newly} and 1 when the call was started.
 */
const ACTION_START: LuaCommand = {
  name: 'pwActionStart',
  numberOfKeys: ENTER_KEYS_END + OUTCOME_KEYS,
  lua: `${CIRCUIT_ENTER_FUNCTION}${OUTCOME_CHANGE_FUNCTION}
if ARGV[1] ~= '' and tonumber(redis.call('GET', KEYS[1]) or '-1') > tonumber(ARGV[1]) then
  return {'stale'}
end
local admission = circuitEnter({unpack(KEYS, 2, ${ENTER_KEYS_END})}, {unpack(ARGV, 3, ${ENTER_ARGS_END})})
local started = 0
local kind = admission[1]
if ARGV[2] == '1' and (kind == 'call' or kind == 'probe' or kind == 'released') then
  outcomeChange({unpack(KEYS, ${ENTER_KEYS_END + 1})}, {unpack(ARGV, ${ENTER_ARGS_END + 1})})
  started = 1
end
return {kind, admission[2], admission[3] or 0, started}
`,
};

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
    private readonly circuits: CircuitStore,
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
