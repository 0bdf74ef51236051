import type { Queue } from 'bullmq';
import { Gauge, Registry } from 'prom-client';
import { oldestWaitingSeconds } from './trends.js';

const STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;

/** Queue depth by queue and state, and the oldest waiting job's age, read from Redis on each scrape. */
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
  new Gauge({
    name: 'queue_oldest_waiting_seconds',
    help: 'Seconds the oldest waiting job of each queue has waited (0 when none waits)',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const queue of queues)
        this.set({ queue: queue.name }, (await oldestWaitingSeconds(queue)) ?? 0);
    },
  });
  return registry;
}
