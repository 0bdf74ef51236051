import type { Logger } from '../logger.js';
import { channels, keys } from '../queue/queues.js';
import type { RedisClient } from '../redis.js';
import { routingRulesSchema } from './routing-rules.js';
import type { RoutingRule } from './routing-rules.js';

export interface StoredRules {
  rules: RoutingRule[];
  updated_at: string | null;
  updated_by: string | null;
}

/**
 * The routing rules in force, kept in Redis so every ingress uses the same ones: seeded from
 * `ACTIONS_CONFIG` or the built-in rules on first read, replaced whole by the dashboard, each
 * change announced on a channel.
 */
export class RulesStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly settings: { queuePrefix: string; seed: readonly RoutingRule[] },
  ) {}

  get key(): string {
    return keys.rules(this.settings.queuePrefix);
  }

  get channel(): string {
    return channels.rulesChanged(this.settings.queuePrefix);
  }

  async read(): Promise<StoredRules> {
    const seed: StoredRules = {
      rules: [...this.settings.seed],
      updated_at: null,
      updated_by: null,
    };
    // SET NX: the first reader seeds, every later one reads what is stored.
    await this.redis.set(this.key, JSON.stringify(seed), 'NX');
    const stored = JSON.parse(
      (await this.redis.get(this.key)) ?? JSON.stringify(seed),
    ) as StoredRules;
    return { ...stored, rules: routingRulesSchema.parse(stored.rules) };
  }

  /** Replaces the rules (already validated) and tells every ingress. */
  async replace(rules: RoutingRule[], actor: string): Promise<StoredRules> {
    const stored: StoredRules = { rules, updated_at: new Date().toISOString(), updated_by: actor };
    await this.redis
      .multi()
      .set(this.key, JSON.stringify(stored))
      .publish(this.channel, stored.updated_at!)
      .exec();
    return stored;
  }
}

/** Routes by the rules as stored. */
const asStored = (stored: readonly RoutingRule[]) => stored;

/**
 * The rules an ingress routes by: read at start, re-read whenever the dashboard announces a
 * change (and when the subscription reconnects), the last known ones kept meanwhile. `inForce`
 * turns the stored rules into those routed by (the ingress turns off the actions ACTIONS_CONFIG
 * disables); it runs once per load, never per request: `current()` hands out its last result.
 */
export class LiveRules {
  private rules: readonly RoutingRule[];

  constructor(
    private readonly store: RulesStore,
    private readonly subscriber: RedisClient,
    private readonly log: Logger,
    initial: readonly RoutingRule[],
    private readonly inForce: (stored: readonly RoutingRule[]) => readonly RoutingRule[] = asStored,
  ) {
    this.rules = inForce(initial);
  }

  current(): readonly RoutingRule[] {
    return this.rules;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string) => {
      if (channel === this.store.channel) void this.reload();
    });
    this.subscriber.on('ready', () => void this.reload());
    await this.subscriber.subscribe(this.store.channel);
    await this.reload();
  }

  async reload(): Promise<void> {
    try {
      this.rules = this.inForce((await this.store.read()).rules);
    } catch (error) {
      this.log.warn({ err: error }, 'cannot read the routing rules: keeping the last known');
    }
  }
}
