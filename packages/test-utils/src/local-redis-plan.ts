/** A way for npm start to get a Redis of its own, in the order they are tried. */
export type LocalRedisWay = 'redis-server' | 'apt-get' | 'docker';

export type LocalRedisPlan =
  /** `REDIS_URL` is set, or this is production: npm start passes on what it was given. */
  | { kind: 'given' }
  /** A Redis answers on the default address: the apps' default finds it. */
  | { kind: 'default' }
  /** Nothing answers there: start a Redis there, the first of `ways` that works; none: say what to install. */
  | { kind: 'private'; ways: LocalRedisWay[] };

/** What the plan depends on; the costly ones are asked only when needed. */
export interface LocalRedisFacts {
  /** `REDIS_URL` (empty counts as unset). */
  redisUrl: string | undefined;
  production: boolean;
  /** Whether a Redis answers on the default address. */
  defaultAnswers: () => Promise<boolean>;
  redisServerOnPath: () => boolean;
  /** Whether Debian's packages can be installed: root, with `apt-get`. */
  canUseApt: () => boolean;
  /** Whether a Docker engine answers (a `docker` command alone is not enough). */
  dockerAnswers: () => boolean;
}

/**
 * How npm start gets its Redis: what it was given, else the one on the default address, else one
 * of its own, from a `redis-server` on the PATH (installing Debian's package first as root with
 * apt-get), else in a container when a Docker engine answers.
 */
export async function planLocalRedis(facts: LocalRedisFacts): Promise<LocalRedisPlan> {
  if (facts.redisUrl || facts.production) return { kind: 'given' };
  if (await facts.defaultAnswers()) return { kind: 'default' };
  const ways: LocalRedisWay[] = [];
  if (facts.redisServerOnPath()) ways.push('redis-server');
  else if (facts.canUseApt()) ways.push('apt-get');
  if (facts.dockerAnswers()) ways.push('docker');
  return { kind: 'private', ways };
}
