import { afterEach, beforeEach } from 'vitest';
import type { Redis } from 'ioredis';
// Relative: @pw/test-utils depends on this package, so it is not one of its dependencies.
import { deleteKeys, newTestRedis, uniquePrefix } from '../../test-utils/src/test-redis.js';

/** A Redis connection and a key prefix of the test's own, its keys deleted afterwards. */
export interface ScriptRedis {
  redis: Redis;
  prefix: string;
  /** Starts collecting the messages published on `channel`. */
  listen(channel: string): Promise<string[]>;
}

export function useScriptRedis(): ScriptRedis {
  const subscribers: Redis[] = [];
  const context = {
    listen: async (channel: string) => {
      const subscriber = context.redis.duplicate();
      subscribers.push(subscriber);
      const messages: string[] = [];
      subscriber.on('message', (_channel: string, message: string) => messages.push(message));
      await subscriber.subscribe(channel);
      return messages;
    },
  } as ScriptRedis;
  beforeEach(() => {
    context.redis = newTestRedis();
    context.prefix = uniquePrefix();
  });
  afterEach(async () => {
    for (const subscriber of subscribers.splice(0)) subscriber.disconnect();
    await deleteKeys(context.redis, context.prefix);
    context.redis.disconnect();
  });
  return context;
}

/** Resolves once `messages` holds `count` messages, or after a second. */
export async function received(messages: string[], count = 1): Promise<string[]> {
  const deadline = Date.now() + 1000;
  while (messages.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return messages;
}
