import { effectiveRules } from '@pw/shared/actions';
import { DEFAULT_RULES, LiveRules, RulesStore } from '@pw/shared/rules';
import { duplicateRedis } from '@pw/shared/runtime';
import type { ActionsConfig } from '@pw/shared/actions';
import type { RoutingRule } from '@pw/shared/rules';
import type { Logger, RedisClient } from '@pw/shared/runtime';
import type { RulesSource } from './webhook-routes.js';

export interface LiveRoutingRules {
  /** The rules in force, as the routes read them per request. */
  rules: RulesSource;
  /** The connection change announcements come on; disconnected at shutdown. */
  subscriber: RedisClient;
  /** Settles once the rules are live (or failed to be: logged, the seed kept meanwhile). */
  started: Promise<void>;
}

/**
 * The routing rules, live: they are kept in Redis (the dashboard edits them) and a change reaches
 * this process at once. Actions disabled in ACTIONS_CONFIG stay disabled whatever the rules say:
 * the rules in force (`effective`) are worked out when the rules load or change, and each request
 * reads them as they are.
 */
export function liveRoutingRules(
  redis: RedisClient,
  settings: { queuePrefix: string; actions: ActionsConfig },
  log: Logger,
  effective: (config: ActionsConfig) => RoutingRule[] = effectiveRules,
): LiveRoutingRules {
  const { queuePrefix, actions } = settings;
  const seed = actions.rules ?? DEFAULT_RULES;
  const store = new RulesStore(redis, { queuePrefix, seed });
  const subscriber = duplicateRedis(redis, { enableOfflineQueue: true });
  const live = new LiveRules(store, subscriber, log, seed, (stored) =>
    effective({ ...actions, rules: [...stored] }),
  );
  const started = live
    .start()
    .catch((error: unknown) => log.warn({ err: error }, 'routing rules not live yet'));
  return { rules: live, subscriber, started };
}
