// The circuits of the partner targets in the operator API (docs/operations.md): an operator reads
// them, opens one by hand for planned maintenance, and closes it, which wakes the actions it held
// at once; it sees why each is open, whether a closed one is recovering, and the inputs it judges
// poison. The circuits are left in Redis as the workers' breaker leaves them (`openCircuit`, or
// their fields written as the breaker writes them).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuitKeys } from '@pw/shared/circuits';
import { actionJobId } from '@pw/shared/queue';
import type { CircuitView } from '@pw/shared/circuits';
import { openCircuit } from '@pw/test-utils';
import { AUTH, notifyCustomer, startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

const UP = 'http://127.0.0.1:4010 partner/partner-webhooks';
const DOWN = 'http://127.0.0.1:4020 partner-ch/partner-webhooks';
const THRESHOLD = 3;
const HELD = ['wh_heldA0000000000000000', 'wh_heldB0000000000000000'];

let h: DashboardHarness;
/** The action jobs held on DOWN, oldest first. */
let heldIds: string[];
beforeAll(async () => {
  h = startDashboard();
  await h.circuits.register([UP, DOWN]);
  heldIds = await openWithHeldJobs();
});
afterAll(() => h.close());

const path = (target: string) => `/api/circuits/${encodeURIComponent(target)}`;
const circuitsListed = async () =>
  ((await h.as('get', '/api/circuits')).body as { circuits: CircuitView[] }).circuits;

/** Opens DOWN as workers do, holding a delayed action job per webhook of HELD, oldest first. */
async function openWithHeldJobs(): Promise<string[]> {
  const held: { id: string; order: number }[] = [];
  for (const webhookId of HELD) {
    const data = notifyCustomer(webhookId);
    const job = await h.actions.add('notify_customer', data, {
      jobId: actionJobId(webhookId, 'notify_customer'),
      delay: 600_000,
    });
    held.push({ id: job.id!, order: job.timestamp });
  }
  // Long enough that no probe falls due during the test.
  await openCircuit(h.redis, h.prefix, DOWN, { failures: THRESHOLD, probeInMs: 600_000, held });
  return held.map((job) => job.id);
}

// The describes below run in this order on the same circuits: each starts from what the one
// before it left (UP opened by hand, then both closed).
describe('circuits in the operator API: reading and opening', () => {
  it('GET /api/circuits lists every known circuit with its state', async () => {
    const response = await h.as('get', '/api/circuits');
    expect(response.status).toBe(200);
    const { circuits } = response.body as { circuits: CircuitView[] };
    expect(circuits).toEqual([
      {
        target: UP,
        state: 'closed',
        since: null,
        consecutive_failures: 0,
        held_actions: 0,
        manual: false,
        next_probe_at: null,
        reason: null,
        recovering: false,
        poison_inputs: 0,
        poison: [],
      },
      {
        target: DOWN,
        state: 'open',
        since: expect.any(String) as string,
        consecutive_failures: THRESHOLD,
        held_actions: HELD.length,
        manual: false,
        next_probe_at: expect.any(String) as string,
        reason: 'failures',
        recovering: false,
        poison_inputs: 0,
        poison: [],
      },
    ]);
    const down = circuits[1]!;
    expect(Date.parse(down.next_probe_at!)).toBeGreaterThan(Date.parse(down.since!));
  });

  it('PUT open opens a closed circuit by hand: manual, no probe, audited with the user', async () => {
    const response = await h.as('put', path(UP)).send({ state: 'open' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      target: UP,
      state: 'open',
      manual: true,
      next_probe_at: null,
      reason: 'manual',
      transition: 'opened',
      woken: 0,
    });
    expect(await h.circuits.view(UP)).toMatchObject({ state: 'open', manual: true });
    expect(h.logs).toContainEqual(
      expect.objectContaining({
        audit: true,
        action: 'circuit_override',
        msg: 'circuit override',
        user: AUTH.user,
        target: UP,
        state: 'open',
        transition: 'opened',
      }),
    );
    // Opening it again changes nothing, and says so.
    const again = await h.as('put', path(UP)).send({ state: 'open' });
    expect(again.body).toMatchObject({ state: 'open', manual: true, transition: null });
  });
});

describe('circuits in the operator API: closing', () => {
  it('PUT closed closes it and wakes the jobs it held at once, newest first; audited', async () => {
    for (const id of heldIds) expect(await h.actions.getJobState(id)).toBe('delayed');
    const response = await h.as('put', path(DOWN)).send({ state: 'closed' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      target: DOWN,
      state: 'closed',
      since: expect.any(String) as string,
      consecutive_failures: 0,
      held_actions: 0,
      manual: false,
      next_probe_at: null,
      reason: null,
      // Closed by hand: a fresh start, not recovering from a close the breaker made.
      recovering: false,
      poison_inputs: 0,
      poison: [],
      transition: 'closed',
      woken: HELD.length,
    });
    for (const id of heldIds) expect(await h.actions.getJobState(id)).toBe('waiting');
    // In the order workers take them (getWaiting lists the next one first): none had failed, so
    // the newest first, the likeliest to be ordinary inputs.
    const waiting = await h.actions.getWaiting();
    expect(waiting.map((job) => job.id)).toEqual([...heldIds].reverse());
    expect(await h.actions.getDelayedCount()).toBe(0);
    expect(h.logs).toContainEqual(
      expect.objectContaining({
        audit: true,
        action: 'circuit_override',
        user: AUTH.user,
        target: DOWN,
        state: 'closed',
        transition: 'closed',
        woken: HELD.length,
      }),
    );

    // The manually opened one closes the same way, with nothing to wake.
    const manual = await h.as('put', path(UP)).send({ state: 'closed' });
    expect(manual.body).toMatchObject({
      state: 'closed',
      manual: false,
      transition: 'closed',
      woken: 0,
    });
    expect((await circuitsListed()).map((c) => [c.target, c.state])).toEqual([
      [UP, 'closed'],
      [DOWN, 'closed'],
    ]);
  });
});

describe('circuits in the operator API: refusals', () => {
  it('404 not_found for a target no worker knows, and nothing is created', async () => {
    const unknown = 'http://127.0.0.1:9999 nobody/nothing';
    const response = await h.as('put', path(unknown)).send({ state: 'open' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: { code: 'not_found', message: `No circuit ${unknown}`, details: [] },
    });
    expect(await h.circuits.known(unknown)).toBe(false);
    expect((await circuitsListed()).map((c) => c.target)).toEqual([UP, DOWN]);
  });

  it('400 invalid_circuit_state for a body without a valid state, and nothing changes', async () => {
    for (const body of [{ state: 'half' }, {}, { state: 'OPEN' }, ['open']]) {
      const response = await h.as('put', path(UP)).send(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((response.body as { error: { code: string } }).error.code).toBe(
        'invalid_circuit_state',
      );
    }
    const none = await h.as('put', path(UP));
    expect(none.status).toBe(400);
    expect(await h.circuits.view(UP)).toMatchObject({ state: 'closed', manual: false });
  });

  it('401 without credentials, for reading and for changing', async () => {
    expect((await request(h.app).get('/api/circuits')).status).toBe(401);
    const put = await request(h.app).put(path(UP)).send({ state: 'open' });
    expect(put.status).toBe(401);
    const wrong = await request(h.app)
      .put(path(UP))
      .auth(AUTH.user, 'wrong')
      .send({ state: 'open' });
    expect(wrong.status).toBe(401);
    expect(await h.circuits.view(UP)).toMatchObject({ state: 'closed', manual: false });
  });
});

/** More targets, registered after the refusals above have checked the list. */
const REOPENED = 'http://127.0.0.1:4030 partner-reopened/partner-webhooks';
const RECOVERING = 'http://127.0.0.1:4040 partner-recovering/partner-webhooks';
const HELD_BY_HAND = 'http://127.0.0.1:4050 partner-held/partner-webhooks';

/**
 * Writes a circuit's hash fields and its poison inputs (`[webhook id, action, ms judged]`) as the
 * breaker does: each input its action job's id, scored by when it was judged.
 */
async function seedCircuit(
  target: string,
  fields: Record<string, string | number>,
  poison: [string, string, number][] = [],
): Promise<void> {
  const keys = circuitKeys(h.prefix, target);
  const transaction = h.redis.multi().sadd(keys.targets, target);
  if (Object.keys(fields).length > 0) transaction.hset(keys.circuit, fields);
  for (const [webhookId, action, at] of poison) {
    transaction.zadd(keys.poison, at, actionJobId(webhookId, action));
  }
  await transaction.exec();
}

const listedAs = async (target: string) =>
  (await circuitsListed()).find((c) => c.target === target);

describe('circuits in the operator API: why open, recovering, poison inputs', () => {
  it('says why each open circuit is open, and whether a closed one is recovering', async () => {
    const now = Date.now();
    await seedCircuit(REOPENED, {
      state: 'open',
      reason: 'reopened',
      failures: 1,
      since: now,
      next_probe_at: now + 600_000,
    });
    await seedCircuit(RECOVERING, { state: 'closed', recovering: 1, failures: 0, since: now });
    // Opened by hand: said so even where the hash has no reason, or still has the workers' one.
    await seedCircuit(HELD_BY_HAND, { state: 'open', manual: 1, since: now });

    expect(await listedAs(REOPENED)).toMatchObject({
      state: 'open',
      reason: 'reopened',
      recovering: false,
      consecutive_failures: 1,
      next_probe_at: new Date(now + 600_000).toISOString(),
    });
    expect(await listedAs(RECOVERING)).toMatchObject({
      state: 'closed',
      reason: null,
      recovering: true,
    });
    expect(await listedAs(HELD_BY_HAND)).toMatchObject({
      state: 'open',
      reason: 'manual',
      manual: true,
    });

    // An operator opens the recovering one: held by hand, no longer recovering.
    await h.redis.hset(circuitKeys(h.prefix, RECOVERING).circuit, 'reason', 'failures');
    const opened = await h.as('put', path(RECOVERING)).send({ state: 'open' });
    expect(opened.body).toMatchObject({
      state: 'open',
      reason: 'manual',
      recovering: false,
      transition: 'opened',
    });
  });

  it('counts the inputs judged poison and lists the 20 newest, each with its webhook and action', async () => {
    const base = Date.parse('2026-03-01T12:00:00.000Z');
    const poison = Array.from({ length: 25 }, (_, i): [string, string, number] => [
      `wh_poison${String(i).padStart(16, '0')}`,
      i % 2 === 0 ? 'notify_customer' : 'lock_price',
      base + i * 1000,
    ]);
    await seedCircuit(REOPENED, {}, poison);

    const reopened = (await listedAs(REOPENED))!;
    expect(reopened.poison_inputs).toBe(25);
    expect(reopened.poison).toEqual(
      poison
        .slice(5)
        .reverse()
        .map(([webhook_id, action, at]) => ({
          webhook_id,
          action,
          since: new Date(at).toISOString(),
        })),
    );
    // Each circuit lists its own.
    expect(await listedAs(RECOVERING)).toMatchObject({ poison_inputs: 0, poison: [] });

    // An input that gets a 2xx leaves the set (the breaker removes it): the next one shows.
    const [newest] = poison.slice(-1);
    await h.redis.zrem(circuitKeys(h.prefix, REOPENED).poison, actionJobId(newest![0], newest![1]));
    const after = (await listedAs(REOPENED))!;
    expect(after.poison_inputs).toBe(24);
    expect(after.poison.map((input) => input.webhook_id)).toEqual(
      poison
        .slice(4, 24)
        .reverse()
        .map(([webhookId]) => webhookId),
    );
  });
});
