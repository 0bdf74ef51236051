import type { Queue } from 'bullmq';
import { SHARED_LUA } from '../lua/lua-files.js';
import { luaCommand } from '../lua/lua-script.js';
import { channels } from '../queue/queues.js';
import { withCommand } from '../redis.js';
import type { RedisClient } from '../redis.js';
import { circuitKeys, circuitTargetsKey } from './circuit-keys.js';
import type { CircuitKeys, CircuitState, CircuitView } from './circuit-keys.js';
import { circuitView, POISON_SHOWN } from './circuit-view.js';

/** An operator opens or closes a circuit by hand (lua/circuit-override-2.lua). */
const OVERRIDE = luaCommand({
  name: 'pwCircuitOverride',
  file: 'circuit-override-2.lua',
  sources: [SHARED_LUA],
});

interface OverrideCommand {
  pwCircuitOverride(...args: string[]): Promise<string>;
}

export interface CircuitBoardSettings {
  queuePrefix: string;
}

/**
 * The circuits of every partner target as the dashboard and the workers' metrics read them, and
 * an operator's changes: open or close one by hand, wake the jobs one held. Knows none of the
 * breaker's thresholds: those are the workers' (apps/worker's `CircuitBreaker`).
 */
export class CircuitBoard {
  protected readonly redis: RedisClient & OverrideCommand;

  constructor(
    redis: RedisClient,
    protected readonly settings: CircuitBoardSettings,
  ) {
    this.redis = withCommand<OverrideCommand>(redis, OVERRIDE);
  }

  protected keys(target: string): CircuitKeys {
    return circuitKeys(this.settings.queuePrefix, target);
  }

  protected get targetsKey(): string {
    return circuitTargetsKey(this.settings.queuePrefix);
  }

  /** Names `targets` in the list of circuits (a worker's configured ones, at start). */
  async register(targets: readonly string[]): Promise<void> {
    if (targets.length > 0) await this.redis.sadd(this.targetsKey, ...targets);
  }

  /** The circuit's state now. */
  async state(target: string): Promise<CircuitState> {
    return (await this.redis.hget(this.keys(target).circuit, 'state')) === 'open'
      ? 'open'
      : 'closed';
  }

  /** An operator opens or closes a circuit by hand; the transition, or null if none. */
  async override(target: string, state: CircuitState): Promise<'opened' | 'closed' | null> {
    const { circuit, targets } = this.keys(target);
    const transition = await this.redis.pwCircuitOverride(circuit, targets, state, target);
    // Every worker's copy of the circuit hears of it (apps/worker's `CircuitCopy`).
    await this.redis.publish(channels.circuitChanged(this.settings.queuePrefix), target);
    return transition === 'opened' || transition === 'closed' ? transition : null;
  }

  /** The ids of the jobs a circuit holds, in their order in the line. */
  held(target: string): Promise<string[]> {
    return this.redis.zrange(this.keys(target).held, '0', '-1');
  }

  /**
   * Moves the jobs the circuit held back to waiting, and returns how many: the fresh ones (never
   * failed) first, newest first, so that the first calls after a close are likely the ordinary
   * inputs that came last; then those that failed, and the poison inputs last (each goes to the
   * end of the waiting line, so they are taken in this order). A job no longer delayed (taken
   * already, removed) is passed over. Should this process die half-way, the others come back on
   * their own after their hold. `queue`: the `actions` queue, or with partitions the one of each
   * job's partition (`queueOf(jobId)`).
   */
  async wakeHeld(target: string, queue: Queue | ((jobId: string) => Queue)): Promise<number> {
    const { held } = this.keys(target);
    // Taken off the line at once: a job held again meanwhile is listed anew. The tiers:
    // apps/worker's includes/circuitLine.lua (fresh below 1e13).
    const [[, fresh] = [null, []], [, failed] = [null, []]] =
      (await this.redis
        .multi()
        .zrevrangebyscore(held, '(1e13', '-inf')
        .zrangebyscore(held, '1e13', '+inf')
        .del(held)
        .exec()) ?? [];
    const listed = [...(fresh as string[]), ...(failed as string[])];
    let woken = 0;
    for (const id of listed) {
      const job = await (typeof queue === 'function' ? queue(id) : queue).getJob(id);
      if (!job || !(await job.isDelayed())) continue;
      await job.promote().then(
        () => woken++,
        () => undefined,
      );
    }
    return woken;
  }

  /** Every known circuit, by target. */
  async list(): Promise<CircuitView[]> {
    const targets = (await this.redis.smembers(this.targetsKey)).sort();
    return this.read(targets);
  }

  /** One circuit; a target never seen is closed. */
  async view(target: string): Promise<CircuitView> {
    const [view] = await this.read([target]);
    return view!;
  }

  /** The circuits of `targets`, each read whole in one transaction, all in one round trip. */
  protected async read(targets: readonly string[]): Promise<CircuitView[]> {
    if (targets.length === 0) return [];
    const transaction = this.redis.multi();
    for (const target of targets) {
      const { circuit, held, poison } = this.keys(target);
      transaction
        .hgetall(circuit)
        .zcard(held)
        .zcard(poison)
        .zrevrange(poison, 0, POISON_SHOWN - 1, 'WITHSCORES');
    }
    const replies = (await transaction.exec()) ?? [];
    return targets.map((target, i) => {
      const [fields, heldCount, poisonCount, poisonNewest] = replies
        .slice(i * 4, i * 4 + 4)
        .map(([error, reply]) => {
          if (error) throw error;
          return reply;
        });
      return circuitView(
        target,
        fields as Record<string, string>,
        Number(heldCount),
        Number(poisonCount),
        poisonNewest as string[],
      );
    });
  }

  /** True when the target is known (configured by a worker, or seen failing). */
  async known(target: string): Promise<boolean> {
    return (await this.redis.sismember(this.targetsKey, target)) === 1;
  }
}
