// The kinds of key a run leaves in Redis, named from the key alone: the prefix and the ids
// (webhook ids, digests, minutes, days, targets) taken out, so that keys of one kind group together.

/** The system's own kinds: a name and the pattern of its keys after `<prefix>:`. */
const SYSTEM_KINDS: readonly (readonly [string, RegExp])[] = [
  ['dedup with first acks (hash per hour)', /^dedup:/],
  ['legacy webhook dedup keys', /^webhooks:de:/],
  ['legacy kept acks (hash per day)', /^acks:/],
  ['outcome records', /^outcome:/],
  ['record stream', /^records$/],
  ['rejected record stream', /^records:rejected$/],
  ['ingress counts', /^ingress-counts:/],
  ['action counts', /^action-counts:/],
  ['latest (per entity)', /^latest:/],
  ['circuits', /^circuits?(:|$)/],
  ['action limits', /^limit:/],
];

const QUEUE_KEYS =
  'wait|paused|active|completed|failed|delayed|prioritized|waiting-children|stalled|' +
  'stalled-check|marker|meta|id|pc|limiter|metrics:.*';

/** BullMQ's kinds in the queues named `queues` (a job id is one segment). */
function bullmqKinds(queues: readonly string[]): (readonly [string, RegExp])[] {
  const queue = `(?:${queues.map((name) => name.replace(/[^\w-]/g, '\\$&')).join('|')})`;
  return [
    ['bullmq events stream', new RegExp(`^${queue}:events$`)],
    ['bullmq job dedup keys', new RegExp(`^${queue}:de:`)],
    ['bullmq queue sets and lists', new RegExp(`^${queue}:(?:${QUEUE_KEYS})$`)],
    ['bullmq job logs', new RegExp(`^${queue}:[^:]+:logs$`)],
    ['bullmq job locks', new RegExp(`^${queue}:[^:]+:lock$`)],
    ['bullmq job hashes', new RegExp(`^${queue}:[^:]+$`)],
  ];
}

/**
 * The kinds whose size does not grow with the webhooks that pass, whatever the traffic: BullMQ's
 * events stream (capped) and its queue sets and lists (the hash tables they grew to), the
 * per-minute counts (kept for a while), circuits, action limits, the rules, the partition count.
 * Every other kind, one not named here included, counts as growing with each webhook.
 */
export const BOUNDED_KINDS: ReadonlySet<string> = new Set([
  'bullmq events stream',
  'bullmq queue sets and lists',
  'ingress counts',
  'action counts',
  'circuits',
  'action limits',
  'rules',
  'partitions',
]);

/**
 * The kind of `key`, one of the run's under `prefix` (BullMQ's in `queues`): a name from the
 * tables above, or else the key's path with each segment that holds a digit replaced by `*`.
 */
export function keyKind(key: string, prefix: string, queues: readonly string[]): string {
  const rest = key.startsWith(`${prefix}:`) ? key.slice(prefix.length + 1) : key;
  for (const [kind, pattern] of [...SYSTEM_KINDS, ...bullmqKinds(queues)]) {
    if (pattern.test(rest)) return kind;
  }
  return rest
    .split(':')
    .map((segment) => (/\d/.test(segment) ? '*' : segment))
    .join(':');
}

export interface KindFigure {
  keys: number;
  bytes: number;
}

/** Keys and bytes per kind, from each key's `MEMORY USAGE`. */
export function groupByKind(
  sizes: Iterable<readonly [key: string, bytes: number]>,
  prefix: string,
  queues: readonly string[],
): Map<string, KindFigure> {
  const kinds = new Map<string, KindFigure>();
  for (const [key, bytes] of sizes) {
    const kind = keyKind(key, prefix, queues);
    const figure = kinds.get(kind) ?? { keys: 0, bytes: 0 };
    kinds.set(kind, { keys: figure.keys + 1, bytes: figure.bytes + bytes });
  }
  return kinds;
}
