import type { Queue } from 'bullmq';
import { SHARED_LUA } from '../lua/lua-files.js';
import { luaCommand } from '../lua/lua-script.js';
import { channels } from '../queue/queues.js';
import { withCommand } from '../redis.js';
import type { RedisClient } from '../redis.js';
import { circuitKeys, circuitTargetsKey } from './circuit-keys.js';
import type { CircuitKeys, CircuitState, CircuitView } from './circuit-keys.js';

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
   * Moves the jobs the circuit held back to waiting, in their order (each goes to the end of the
   * line, so they are taken in this order), and returns how many. A job no longer delayed (taken
   * already, removed) is passed over. Should this process die half-way, the others come back on
   * their own after their hold. `queue`: the `actions` queue, or with partitions the one of each
   * job's partition (`queueOf(jobId)`).
   */
  async wakeHeld(target: string, queue: Queue | ((jobId: string) => Queue)): Promise<number> {
    const { held } = this.keys(target);
    // Taken off the list at once: a job held again meanwhile is listed anew.
    const [[, listed] = [null, []]] =
      (await this.redis.multi().zrange(held, '0', '-1').del(held).exec()) ?? [];
    let woken = 0;
    for (const id of listed as string[]) {
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
    return Promise.all(targets.map((target) => this.view(target)));
  }

  /** One circuit; a target never seen is closed. */
  async view(target: string): Promise<CircuitView> {
    const { circuit, held } = this.keys(target);
    const [fields, heldCount] = await Promise.all([
      this.redis.hgetall(circuit),
      this.redis.zcard(held),
    ]);
    const time = (ms: string | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);
    const state: CircuitState = fields.state === 'open' ? 'open' : 'closed';
    return {
      target,
      state,
      since: time(fields.since),
      consecutive_failures: Number(fields.failures ?? 0),
      held_actions: heldCount,
      manual: fields.manual === '1',
      next_probe_at: state === 'open' && fields.manual !== '1' ? time(fields.next_probe_at) : null,
    };
  }

  /** True when the target is known (configured by a worker, or seen failing). */
  async known(target: string): Promise<boolean> {
    return (await this.redis.sismember(this.targetsKey, target)) === 1;
  }
}
