import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions } from 'ioredis';
import { invalidArgument, PwError } from './errors.js';
import type { FailureCode } from './errors.js';

/** `REDIS_URL` is not a `redis://` or `rediss://` address this system can read. */
export const INVALID_REDIS_URL = 'invalid_redis_url' satisfies FailureCode;

/** A connection to Redis: one server, or a Redis Cluster (`REDIS_CLUSTER=true`). */
export type RedisClient = Redis | Cluster;

/** The connection settings the composition roots choose; each means the same for a cluster. */
export interface RedisClientOptions {
  connectionName?: string;
  /** `null`: retry a command forever while Redis is away (BullMQ workers need it). */
  maxRetriesPerRequest?: number | null;
  /** `false`: fail commands at once while disconnected instead of queueing them. */
  enableOfflineQueue?: boolean;
  commandTimeout?: number;
  lazyConnect?: boolean;
  /** Commands issued in the same tick leave in one write (a cluster groups them by node). */
  enableAutoPipelining?: boolean;
}

export interface RedisNode {
  host: string;
  port: number;
}

export interface ParsedRedisUrl {
  /** One for a single server; one or more seed nodes of a cluster. */
  nodes: RedisNode[];
  tls: boolean;
  username?: string;
  password?: string;
  /** The database number from the path (`/2`); 0 when there is none. */
  db: number;
}

/**
 * Reads `REDIS_URL`: `redis://` or `rediss://`, optional credentials, then one `host:port` or
 * several separated by commas (seed nodes of a cluster), then an optional `/db`. Throws a
 * `PwError` (`INVALID_REDIS_URL`) whose message says what is wrong when it is not one.
 */
export function parseRedisUrl(url: string): ParsedRedisUrl {
  const match = /^(rediss?):\/\/([^/?#]*)(.*)$/i.exec(url);
  const invalid = (problem: string) => new PwError(INVALID_REDIS_URL, problem);
  if (!match) throw invalid('must be a redis:// or rediss:// URL');
  const [, scheme = 'redis', authority = '', rest = ''] = match;
  const at = authority.lastIndexOf('@');
  const userInfo = authority.slice(0, at + 1);
  const nodes = authority
    .slice(at + 1)
    .split(',')
    .map((address) => address.trim());
  let first: URL | undefined;
  const parsed = nodes.map((address) => {
    const href = `${scheme}://${userInfo}${address}${rest}`;
    if (address === '' || !URL.canParse(href))
      throw invalid(`has an invalid host:port "${address}"`);
    const node = new URL(href);
    first ??= node;
    return { host: node.hostname.replace(/^\[|\]$/g, ''), port: Number(node.port || 6379) };
  });
  const path = first?.pathname ?? '';
  if (!/^\/?\d*$/.test(path)) throw invalid('must end in a database number, if anything');
  return {
    nodes: parsed,
    tls: scheme.toLowerCase() === 'rediss',
    ...(first?.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first?.password ? { password: decodeURIComponent(first.password) } : {}),
    db: Number(path.slice(1) || 0),
  };
}

/** `host:port` of every node `REDIS_URL` names, for logs (never the credentials). */
export const redisHosts = (url: string): string =>
  parseRedisUrl(url)
    .nodes.map((node) => `${node.host}:${node.port}`)
    .join(',');

/** True when `prefix` holds a Redis Cluster hash tag (`{pw}`), so every key under it shares a slot. */
export const hasHashTag = (prefix: string): boolean => /^[^{]*\{[^}]+\}/.test(prefix);

/**
 * ioredis's `reconnectOnError`: after a failover behind one address (a DNS name, a virtual
 * address), a connection made before still reaches the old master, now a replica, which refuses
 * every write with READONLY; a server loading its data answers LOADING. Reconnect, to wherever the
 * address leads now, and let the command fail (1): it was not run, and its caller tries again (the
 * ingress answers 503, BullMQ retries). Never resend it (2): a command of a transaction (MULTI)
 * would run again on its own, outside the transaction.
 */
export const reconnectOnFailover = (error: Error): 1 | false =>
  /^(READONLY|LOADING)\b/.test(error.message) ? 1 : false;

/**
 * The one way the apps connect to Redis: a `Redis` for one server, or, with `cluster`, a
 * `Cluster` seeded with every node of `url`. Queue prefixes must then be hash tags (`{pw}`).
 * Several nodes without `cluster` is a misuse (config validation refuses it): a coded TypeError.
 * Every connection reconnects on READONLY and LOADING (`reconnectOnFailover`). A cluster's node
 * connection that drops ends, as ioredis's default has it: its commands fail over to the node the
 * slots name next, and a slots refresh makes the connection again when the node is back.
 */
export function createRedis(
  url: string,
  cluster: boolean,
  options: RedisClientOptions = {},
): RedisClient {
  if (!cluster) {
    if (url.includes(',')) {
      throw invalidArgument('REDIS_URL names several nodes: set REDIS_CLUSTER=true');
    }
    return new Redis(url, { reconnectOnError: reconnectOnFailover, ...options });
  }
  const parsed = parseRedisUrl(url);
  const { enableOfflineQueue, lazyConnect, enableAutoPipelining, ...connection } = options;
  const clusterOptions: ClusterOptions = {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    // No `clusterNodeRetryStrategy`: a node connection that waits to reconnect keeps its commands
    // (with `maxRetriesPerRequest: null`, BullMQ's), and when the slots refresh then drops that
    // node (its replica promoted), ioredis disconnects it without ever failing them: a worker's
    // fetch on the dead master waited for ever, and its partition was never taken again.
    // Ready once the client knows the slots, without waiting for `cluster_state:ok`: when that
    // check fails, ioredis connects again but never settles the `connect()` it answered, which
    // BullMQ awaits when it remakes a blocking connection whose fetch timed out. A command to a
    // slot no node serves yet gets CLUSTERDOWN, which ioredis tries again.
    enableReadyCheck: false,
    redisOptions: {
      reconnectOnError: reconnectOnFailover,
      ...connection,
      ...(parsed.username ? { username: parsed.username } : {}),
      ...(parsed.password ? { password: parsed.password } : {}),
      ...(parsed.tls ? { tls: {} } : {}),
    },
    // With TLS the certificates name the hosts, so connect by name rather than resolved address.
    ...(parsed.tls
      ? {
          dnsLookup: (address: string, callback: (e: null, a: string) => void) =>
            callback(null, address),
        }
      : {}),
  };
  return new Cluster(parsed.nodes, clusterOptions);
}

/**
 * A new connection with the same settings (and `overrides`), for a subscriber or a blocking
 * reader: `Redis.duplicate` and `Cluster.duplicate` take their options differently. It has no
 * `commandTimeout` unless `overrides` gives one: a blocking command waits longer than any.
 */
export function duplicateRedis(
  client: RedisClient,
  overrides: RedisClientOptions = {},
): RedisClient {
  overrides = { commandTimeout: undefined, ...overrides };
  if (!(client instanceof Cluster)) return client.duplicate(overrides);
  const { enableOfflineQueue, lazyConnect, enableAutoPipelining, ...connection } = overrides;
  return client.duplicate([], {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    // A cluster option: the cluster client groups the commands by node.
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    redisOptions: { ...client.options.redisOptions, ...connection },
  });
}

/** A Lua script run as the Redis command `name`. */
export interface LuaCommand {
  name: string;
  /** Omitted: the command's first argument says how many keys follow (ioredis). */
  numberOfKeys?: number;
  lua: string;
}

/**
 * Defines `command` on `redis` unless it has it already (a client keeps its definitions), and
 * returns the client typed with it, as ioredis's `defineCommand` leaves it untyped.
 */
export function withCommand<Commands>(
  redis: RedisClient,
  command: LuaCommand,
): RedisClient & Commands {
  if (!(command.name in redis)) redis.defineCommand(command.name, command);
  return redis as RedisClient & Commands;
}
