import { describe, expect, it } from 'vitest';
import { newTestRedis } from '@pw/test-utils';
import { CircuitBreaker } from '../src/circuit-breaker.js';
import { circuitTarget } from '../src/config.js';
import { webhookJob } from './fixtures.js';
import { startWorkerHarness } from './harness.js';

// A 2xx that comes back late, to a call sent before the outage's failures, is no news of the
// target (docs/reliability-and-security.md, What it counts): had it made the target clean again,
// every job waiting at the suspect circuit would have been sent at once, without asking it, and
// the partner would have got more calls in the outage than the threshold.

const THRESHOLD = 4;
const PROBE_MS = 60_000;

/** A sales opportunity's status change that sets off one call (`update_crm`). */
const oneCall = () => webhookJob('sales', 'negotiation');

describe('a late 2xx as an outage begins', { timeout: 60_000 }, () => {
  it('resets nothing: the partner gets no more calls in the outage than the threshold', async () => {
    const h = await startWorkerHarness({
      concurrency: 10,
      attempts: 3,
      // No retry and no probe within the test: every call is a first try.
      backoff: { type: 'fixed', delay_ms: 60_000 },
      circuit: { failureThreshold: THRESHOLD, probeIntervalMs: PROBE_MS },
    });
    const redis = newTestRedis();
    const circuits = new CircuitBreaker(redis, {
      queuePrefix: h.prefix,
      failureThreshold: THRESHOLD,
      probeIntervalMs: PROBE_MS,
      leaseMs: 30_000,
    });
    const target = circuitTarget(h.target);
    const api = h.sandbox.api;
    try {
      const warm = oneCall();
      await h.enqueue(warm);
      expect((await h.finished(warm.webhook_id)).state).toBe('completed');

      // One failure: the target is suspect, its calls in flight bounded.
      const first = oneCall();
      api.failNext({ path: `/crm/opportunities/${first.entity_id}`, status: 503 });
      await h.enqueue(first);
      await expect.poll(async () => (await circuits.view(target)).consecutive_failures).toBe(1);

      // A call sent now is answered 2xx, but late: the partner holds it.
      const late = oneCall();
      const held = api.hold(`/crm/opportunities/${late.entity_id}`);
      await h.enqueue(late);
      await held.held(1);

      // The outage: every call fails at once. The two calls the bound leaves room for fail.
      const outageFrom = new Date();
      api.failNext({ path: /.*/, status: 503, forMs: 60_000 });
      const failedInOutage = () =>
        api.calls.filter((call) => call.status === 503 && call.received_at >= outageFrom).length;
      for (let i = 0; i < 12; i++) await h.enqueue(oneCall());
      await expect.poll(async () => (await circuits.view(target)).consecutive_failures).toBe(3);

      // The late 2xx comes back: sent before two of the failures, it tells nothing of the target.
      held.release();
      expect((await h.finished(late.webhook_id)).state).toBe('completed');
      await expect.poll(async () => (await circuits.view(target)).state).toBe('open');
      expect(failedInOutage()).toBeLessThanOrEqual(THRESHOLD);
      expect(await circuits.view(target)).toMatchObject({ consecutive_failures: THRESHOLD });
    } finally {
      redis.disconnect();
      await h.close();
    }
  });
});
