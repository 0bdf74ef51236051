import type { Queue } from 'bullmq';
import { luaCommand, withCommand } from '@pw/shared/lua';
import { keys, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import type { Logger, RedisClient } from '@pw/shared/runtime';
import { WORKER_LUA } from './lua/lua-files.js';

/** The turn's take and give (lua/entity-turn-4.lua). */
const ENTITY_TURN = luaCommand({
  name: 'pwEntityTurn',
  file: 'entity-turn-4.lua',
  sources: [WORKER_LUA],
});

interface TurnCommands {
  pwEntityTurn(
    turn: string,
    waiting: string,
    delayed: string,
    newest: string,
    mode: 'take',
    job: string,
    leaseMs: number,
    order: number,
    staleAfter: number | '',
  ): Promise<number | 'stale'>;
  pwEntityTurn(
    turn: string,
    waiting: string,
    delayed: string,
    newest: string,
    mode: 'give',
    job: string,
  ): Promise<string>;
}

/** One entity's turn for one action. */
export interface Turn {
  eventType: string;
  entityId: string;
  action: string;
  jobId: string;
  /** The job's event order (epoch ms): the oldest waiting is woken first. */
  order: number;
}

/** The longest a job waiting for a turn sleeps before it looks again, woken or not. */
export const TURN_LOOK_AGAIN_MS = 2000;

/**
 * Per entity and state-changing action, one call at a time (docs/architecture.md, Order): a job
 * takes the turn before its call and gives it back after; a job that finds it taken waits,
 * delayed without spending an attempt, and is woken when the turn is given back (or looks again
 * after at most `TURN_LOOK_AGAIN_MS`, so that a worker that died mid-call holds it up no longer
 * than the turn's lease).
 */
export class EntityTurns {
  private readonly redis: RedisClient & TurnCommands;

  constructor(
    redis: RedisClient,
    /** The partition's prefix: its entities' turns. */
    private readonly prefix: string,
    /** How long a turn is kept if its worker dies without giving it back. */
    private readonly leaseMs: number,
    /** The queue a job id is in (its partition's), to wake a waiting job. */
    private readonly queueOf: (jobId: string) => Queue<ActionJobData>,
    private readonly log: Logger,
  ) {
    this.redis = withCommand<TurnCommands>(redis, ENTITY_TURN);
  }

  /**
   * 0 when the turn is the job's; else how long to wait before looking again (ms). With
   * `staleAfter` (the event's order time), the out-of-order check comes first, in the same
   * command: 'stale' when a newer event for the entity came first, and the turn is not taken.
   */
  async take(turn: Turn): Promise<number>;
  async take(turn: Turn, staleAfter: number | undefined): Promise<number | 'stale'>;
  async take(turn: Turn, staleAfter?: number): Promise<number | 'stale'> {
    const left = await this.redis.pwEntityTurn(
      ...this.keysOf(turn),
      'take',
      turn.jobId,
      this.leaseMs,
      turn.order,
      staleAfter ?? '',
    );
    return left === 0 || left === 'stale' ? left : Math.min(left, TURN_LOOK_AGAIN_MS);
  }

  /** Gives the turn back after the call, and wakes the oldest job waiting for it. */
  async give(turn: Turn): Promise<void> {
    const next = await this.redis.pwEntityTurn(...this.keysOf(turn), 'give', turn.jobId);
    if (!next) return;
    try {
      const job = await this.queueOf(next).getJob(next);
      if (job && (await job.isDelayed())) await job.promote();
    } catch (error) {
      // It looks again on its own, within TURN_LOOK_AGAIN_MS.
      this.log.debug({ err: error, job_id: next }, 'job waiting for its turn not woken');
    }
  }

  private keysOf(turn: Turn): [string, string, string, string] {
    const { eventType, entityId, action } = turn;
    return [
      keys.turn(this.prefix, eventType, entityId, action),
      keys.turnWaiting(this.prefix, eventType, entityId, action),
      keys.queue(this.prefix, QUEUE_NAMES.actions).delayed!,
      keys.latest(this.prefix, eventType, entityId),
    ];
  }
}
