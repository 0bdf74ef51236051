import type { Queue } from 'bullmq';
import { Gauge, Registry } from 'prom-client';
import { oldestWaitingSeconds } from './trends.js';

const STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;

/** The queues by name: the `actions` queues of every partition are one queue to read. */
function byName(queues: readonly Queue[]): Map<string, Queue[]> {
  const named = new Map<string, Queue[]>();
  for (const queue of queues) named.set(queue.name, [...(named.get(queue.name) ?? []), queue]);
  return named;
}

/**
 * Queue depth by queue and state, and the oldest waiting job's age, read from Redis on each
 * scrape; a queue of several partitions is summed over them (its oldest job: the oldest of all).
 */
export function createDashboardMetrics(queues: readonly Queue[]): Registry {
  const registry = new Registry();
  const named = byName(queues);
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs in each queue by state, over every partition (failed jobs of the actions queue are the dead letters)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      for (const [name, group] of named) {
        const counts = await Promise.all(group.map((queue) => queue.getJobCounts(...STATES)));
        for (const state of STATES) {
          const total = counts.reduce((sum, count) => sum + (count[state] ?? 0), 0);
          this.set({ queue: name, state }, total);
        }
      }
    },
  });
  new Gauge({
    name: 'queue_oldest_waiting_seconds',
    help: 'Seconds the oldest waiting job of each queue, over every partition, has waited (0 when none waits)',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const [name, group] of named) {
        const ages = await Promise.all(group.map((queue) => oldestWaitingSeconds(queue)));
        this.set({ queue: name }, Math.max(0, ...ages.map((age) => age ?? 0)));
      }
    },
  });
  return registry;
}
