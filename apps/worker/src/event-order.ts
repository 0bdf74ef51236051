import { keys, orderTime, withCommand } from '@pw/shared';
import type { LuaCommand, RedisClient } from '@pw/shared';

/**
 * Notes an event's time for its entity (as the ingress's intake does, `INTAKE_COMMAND`, for the
 * webhooks it queues; this is for webhook jobs an earlier ingress queued) and returns the newest time noted before it (-1: none).
 * KEYS[1] the entity's record; ARGV[1] the event's time in ms, ARGV[2] how long to keep it.
 */
const TAKE_IN: LuaCommand = {
  name: 'pwTakeIn',
  numberOfKeys: 1,
  lua: `
local previous = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > previous then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return previous
`,
};

interface OrderCommands {
  pwTakeIn(key: string, timeMs: number, keepMs: number): Promise<number>;
}

/**
 * Out-of-order protection: remembers, per entity, the newest `timestamp` taken in, so an older
 * event arriving later (or still retrying when a newer one arrives) is known to be stale (the
 * action's start, `ActionStart`, looks).
 */
export class EventOrder {
  private readonly redis: RedisClient & OrderCommands;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    /** How long an entity's newest time is remembered. */
    private readonly keepSeconds: number,
  ) {
    this.redis = withCommand<OrderCommands>(redis, TAKE_IN);
  }

  /** Notes the event; true when a newer event for the same entity was taken in before it. */
  async takeIn(
    eventType: string,
    entityId: string,
    event: Record<string, unknown>,
    receivedAt: string,
  ) {
    const time = orderTime(event, Date.parse(receivedAt));
    if (time === undefined) return false;
    const key = keys.latest(this.prefix, eventType, entityId);
    const previous = await this.redis.pwTakeIn(key, time, this.keepSeconds * 1000);
    return previous > time;
  }
}
