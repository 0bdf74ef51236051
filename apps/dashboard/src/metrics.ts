import type { Queue } from 'bullmq';
import { Gauge, Registry } from 'prom-client';

const STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;

/** Queue depth by queue and state, read from Redis on each scrape. */
export function createDashboardMetrics(queues: readonly Queue[]): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs in each queue by state (failed jobs of the actions queue are the dead letters)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      for (const queue of queues) {
        const counts = await queue.getJobCounts(...STATES);
        for (const state of STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
      }
    },
  });
  return registry;
}
