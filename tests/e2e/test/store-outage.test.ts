// PostgreSQL stopped for a minute under load, through the real surface: npm start's apps against
// a PostgreSQL of this test's own, RECORD_TTL_SECONDS much shorter than the outage; webhooks keep
// being accepted and processed, an operator reading them meanwhile sees each completed action
// completed (BullMQ has long removed its finished jobs), and once the store is back every
// acknowledged webhook's record is in it, completed.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WEBHOOK_SECRET } from '@pw/shared/config';
import { acknowledgementSchema, sampleEvent } from '@pw/shared/events';
import { signEvent } from '@pw/shared/signing';
import type { EmbeddedPostgresServer } from '@pw/shared/records';
import { freePort, startTestPostgres } from '@pw/test-utils';
import { startSystem } from './system.js';
import type { RunningSystem } from './system.js';

let system: RunningSystem;
let postgres: EmbeddedPostgresServer;
let dataDir: string;
let port: number;
/** RECORD_TTL_SECONDS: the outage lasts 12 times as long. */
const TTL = 5;
// The apps' password, the same after the restart: the apps keep their DATABASE_URL.
const password = randomBytes(24).toString('hex');
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'pw-store-outage-'));
  port = await freePort();
  postgres = await startTestPostgres({ dataDir, port, password });
  system = await startSystem({ DATABASE_URL: postgres.url, RECORD_TTL_SECONDS: String(TTL) });
}, 120_000);
afterAll(async () => {
  await system.stop();
  await postgres.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the record store away for 60 s under load', { timeout: 240_000 }, () => {
  it('loses no acknowledged webhook: all recorded, completed, once it is back', async () => {
    const acked: string[] = [];
    let sending = true;
    let sent = 0;
    const load = (async () => {
      while (sending) {
        const response = await fetch(`${system.url.ingress}/webhooks/quote-status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(
            signEvent(sampleEvent('quote', { id: `outage-${sent++}` }), DEV_WEBHOOK_SECRET),
          ),
        });
        expect(response.status).toBe(200);
        acked.push(acknowledgementSchema.parse(await response.json()).webhook_id);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const until = async (condition: () => boolean) => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 100));
    };

    await until(() => acked.length >= 20);
    await postgres.stop();
    const beforeOutage = acked.length;
    // The outage itself: a minute, by the clock.
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    const duringOutage = acked.length;
    // Read as an operator would, the store still away: those taken in as it went, which it never
    // had, done long ago (far more than RECORD_TTL_SECONDS), read completed with their calls.
    for (const id of acked.slice(beforeOutage, beforeOutage + 20)) {
      const response = await system.dashboard(`/api/webhooks/${id}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        state: string;
        actions: { state: string; attempts: number }[];
      };
      expect(body.state).toBe('completed');
      for (const action of body.actions) {
        expect(action).toMatchObject({ state: 'completed' });
        expect(action.attempts).toBeGreaterThanOrEqual(1);
      }
    }
    postgres = await startTestPostgres({ dataDir, port, password });
    await until(() => acked.length >= duringOutage + 20);
    sending = false;
    await load;

    // Every acknowledged webhook, found in the store, completed.
    const missing: string[] = [];
    for (const id of acked) {
      const record = await system
        .poll<{ state: string; finished_at: string | null }>(
          `/api/webhooks/${id}`,
          (body) => body.state === 'completed' && typeof body.finished_at === 'string',
        )
        .catch(() => null);
      if (!record) missing.push(id);
    }
    expect(missing).toEqual([]);
    // The recorder said it had to wait, and the worker's metrics show nothing failed meanwhile.
    expect(system.run.output).toContain('record store write failed: changes wait in Redis');
    expect(acked.length).toBeGreaterThan(duringOutage);
  });
});
