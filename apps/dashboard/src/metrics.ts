import type { Queue } from 'bullmq';
import { Gauge, Registry } from 'prom-client';
import { oldestWaitingSeconds } from './trends.js';

const STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;

/** How old the queue figures `/metrics` shows may be: they are read from Redis this often. */
export const METRICS_REFRESH_MS = 5_000;

/** The queues by name: the `actions` queues of every partition are one queue to read. */
function byName(queues: readonly Queue[]): Map<string, Queue[]> {
  const named = new Map<string, Queue[]>();
  for (const queue of queues) named.set(queue.name, [...(named.get(queue.name) ?? []), queue]);
  return named;
}

type State = (typeof STATES)[number];

/** Each queue's jobs by state and its oldest waiting job's age, over every partition. */
interface QueueFigures {
  counts: Map<string, Record<State, number>>;
  oldest: Map<string, number>;
}

async function readFigures(named: Map<string, Queue[]>): Promise<QueueFigures> {
  const figures: QueueFigures = { counts: new Map(), oldest: new Map() };
  for (const [name, group] of named) {
    const [counts, ages] = await Promise.all([
      Promise.all(group.map((queue) => queue.getJobCounts(...STATES))),
      Promise.all(group.map((queue) => oldestWaitingSeconds(queue))),
    ]);
    const total = (state: State) => counts.reduce((sum, count) => sum + (count[state] ?? 0), 0);
    figures.counts.set(
      name,
      Object.fromEntries(STATES.map((state) => [state, total(state)])) as Record<State, number>,
    );
    figures.oldest.set(name, Math.max(0, ...ages.map((age) => age ?? 0)));
  }
  return figures;
}

export interface DashboardMetrics {
  registry: Registry;
  /** Stops reading the figures. */
  close(): void;
}

/**
 * Queue depth by queue and state, and the oldest waiting job's age; a queue of several partitions
 * is summed over them (its oldest job: the oldest of all). Read from Redis every `refreshMs`, not
 * on each scrape: `/metrics` needs no credentials, and reading every partition's queue on each
 * request cost Redis in proportion to the partitions and to the requests. A scrape costs Redis
 * nothing; its figures are at most `refreshMs` old. A read that fails keeps the figures before it;
 * until one has succeeded (Redis not ready at the start), a scrape reads them itself.
 */
export function createDashboardMetrics(
  queues: readonly Queue[],
  { refreshMs = METRICS_REFRESH_MS }: { refreshMs?: number } = {},
): DashboardMetrics {
  const registry = new Registry();
  const named = byName(queues);
  let latest: QueueFigures | undefined;
  let reading: Promise<QueueFigures> | undefined;
  // One read at a time; a failed one keeps the figures before it.
  const refresh = () =>
    (reading ??= readFigures(named)
      .then((figures) => (latest = figures))
      .finally(() => (reading = undefined)));
  // Until a read has succeeded (Redis was not ready yet at the first), a scrape reads itself.
  const figures = async () => latest ?? (await refresh());
  refresh().catch(() => undefined);
  const timer = setInterval(() => void refresh().catch(() => undefined), refreshMs);
  timer.unref();
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs in each queue by state, over every partition (failed jobs of the actions queue are the dead letters)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      for (const [queue, counts] of (await figures()).counts) {
        for (const state of STATES) this.set({ queue, state }, counts[state]);
      }
    },
  });
  new Gauge({
    name: 'queue_oldest_waiting_seconds',
    help: 'Seconds the oldest waiting job of each queue, over every partition, has waited (0 when none waits)',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const [queue, seconds] of (await figures()).oldest) this.set({ queue }, seconds);
    },
  });
  return { registry, close: () => clearInterval(timer) };
}
