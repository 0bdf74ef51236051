import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgementSchema, errorBodySchema } from '@pw/shared/events';
import { OutcomeStore } from '@pw/shared/outcomes';
import { actionJobId } from '@pw/shared/queue';
import { signedEvent } from '@pw/test-utils';
import { jobCount, postJson, startHarness } from './harness.js';
import type { Harness } from './harness.js';

const path = '/webhooks/contract-status';
const SKEW_S = 300;
const WINDOW_S = 604_800;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** An ingress whose clock reads `now` (ms), so a test can move time without waiting. */
async function ingressAt(now: { ms: number }) {
  harness = await startHarness({ now: () => now.ms });
  return harness;
}

const at = (ms: number) => signedEvent('contract', { now: new Date(ms) });

describe('the freshness window on timestamp', () => {
  it('refuses an event dated far in the future (2999) with 422 timestamp_out_of_range, enqueuing nothing', async () => {
    const ingress = await ingressAt({ ms: Date.now() });
    const response = await postJson(ingress.app, path, at(Date.parse('2999-01-01T00:00:00Z')));
    expect(response.status).toBe(422);
    const body = errorBodySchema.parse(response.body);
    expect(body.error.code).toBe('timestamp_out_of_range');
    expect(body.error.details[0]?.path).toBe('timestamp');
    expect(await jobCount(ingress)).toBe(0);
  });

  it('refuses an ancient event (2001) the same way', async () => {
    const ingress = await ingressAt({ ms: Date.now() });
    const response = await postJson(ingress.app, path, at(Date.parse('2001-01-01T00:00:00Z')));
    expect(response.status).toBe(422);
    expect(errorBodySchema.parse(response.body).error.code).toBe('timestamp_out_of_range');
    expect(await jobCount(ingress)).toBe(0);
  });

  it('accepts up to MAX_CLOCK_SKEW_SECONDS ahead and DEDUP_WINDOW_SECONDS back, and not a second more', async () => {
    const now = Date.parse('2026-11-23T12:00:00.000Z');
    const ingress = await ingressAt({ ms: now });
    expect((await postJson(ingress.app, path, at(now + SKEW_S * 1000))).status).toBe(200);
    expect((await postJson(ingress.app, path, at(now - WINDOW_S * 1000))).status).toBe(200);
    expect((await postJson(ingress.app, path, at(now + SKEW_S * 1000 + 1000))).status).toBe(422);
    expect((await postJson(ingress.app, path, at(now - WINDOW_S * 1000 - 1000))).status).toBe(422);
    expect(await jobCount(ingress)).toBe(2);
  });
});

describe('the freshness window, stale events and repeats', () => {
  it("an event dated ahead, within the skew allowance, does not make its entity's next event stale; an older one still is", async () => {
    const clock = { ms: Date.parse('2026-11-23T12:00:00.000Z') };
    const ingress = await ingressAt(clock);
    const records = new OutcomeStore(ingress.inspect, {
      queuePrefix: ingress.prefix,
      recordTtlSeconds: 60,
    });
    const of = (ms: number, status: string) =>
      signedEvent('contract', { id: 'C-ahead', status, now: new Date(ms) });
    const post = async (event: Record<string, unknown>) =>
      acknowledgementSchema.parse((await postJson(ingress.app, path, event)).body);
    // Dated 200 s ahead: it counts as taken in at the receiver's time.
    const ahead = await post(of(clock.ms + 200_000, 'signed'));
    clock.ms += 10_000;
    const next = await post(of(clock.ms, 'active'));
    clock.ms += 10_000;
    const older = await post(of(clock.ms - 15_000, 'draft'));
    expect((await records.get(ahead.webhook_id))?.stale).toBe(false);
    expect((await records.get(next.webhook_id))?.stale).toBe(false);
    expect((await records.get(older.webhook_id))?.stale).toBe(true);
    // The worker orders by the same time: each action job carries when the intake took it in.
    const [job] = await ingress.queue.getJobs(['wait'], 0, 0);
    expect(job?.data.received_at).toBe(new Date(clock.ms).toISOString());
  });

  it('a captured signed event replayed as late as it is still acceptable is answered as a repeat, never run again', async () => {
    // The worst case: dated the whole skew ahead, so acceptable until skew + window from now.
    const clock = { ms: Date.parse('2026-11-23T12:00:00.000Z') };
    const ingress = await ingressAt(clock);
    const event = at(clock.ms + SKEW_S * 1000);
    const first = acknowledgementSchema.parse((await postJson(ingress.app, path, event)).body);

    // The event's hour hash outlives the time the event can still be accepted.
    const dedupKeys = await ingress.inspect.keys(`${ingress.prefix}:dedup:*`);
    expect(dedupKeys).toHaveLength(1);
    const ttlMs = await ingress.inspect.pttl(dedupKeys[0]!);
    expect(ttlMs).toBeGreaterThan((WINDOW_S + SKEW_S - 60) * 1000);

    // The first's action jobs leave Redis RECORD_TTL_SECONDS after they finished (here: removed as
    // BullMQ's removal by age does); its ack stays in the event's field of the hour hash.
    const jobKeys = first.actions_triggered.map(
      (action) => `${ingress.prefix}:actions:${actionJobId(first.webhook_id, action)}`,
    );
    expect(await ingress.inspect.del(...jobKeys)).toBe(first.actions_triggered.length);
    const jobsBefore = await ingress.queue.getJobCounts();

    // Just before the event leaves the window, a replay is still a repeat, with the first ack.
    clock.ms += (SKEW_S + WINDOW_S - 1) * 1000;
    const replay = await postJson(ingress.app, path, event);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first);
    // After that the event is refused outright.
    clock.ms += 2000;
    const late = await postJson(ingress.app, path, event);
    expect(late.status).toBe(422);
    expect(await ingress.queue.getJobCounts()).toEqual(jobsBefore);
  });
});
