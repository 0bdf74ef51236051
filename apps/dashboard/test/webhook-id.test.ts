// A `:webhook_id` that is not `wh_` and 22 base64url characters gets 404 without a look-up:
// names such as `meta` or `events` would otherwise reach BullMQ's own keys under the same prefix,
// which are no records (a 500 WRONGTYPE without this check).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, webhookOf } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
beforeAll(async () => {
  h = startDashboard();
  // BullMQ's own keys exist under the queue's prefix once it has a job.
  await h.intake.add(
    webhookOf('wh_bullmq0000000000000000', 'quote.status_changed', ['notify_customer'], '1'),
  );
});
afterAll(() => h.close());

const notFound = (id: string) => ({
  error: { code: 'not_found', message: `No webhook ${id}`, details: [] },
});

describe('webhook ids in operator API paths', () => {
  it('404 not_found for BullMQ key names, status and replay alike', async () => {
    for (const name of ['meta', 'id', 'events', 'completed']) {
      const status = await h.as('get', `/api/webhooks/${name}`);
      expect(status.status, name).toBe(404);
      expect(status.body, name).toEqual(notFound(name));
      const replay = await h.as('post', `/api/webhooks/${name}/replay`);
      expect(replay.status, name).toBe(404);
      expect(replay.body, name).toEqual(notFound(name));
    }
  });

  it('404 for one character too few or too many, or one outside base64url', async () => {
    for (const id of [
      'wh_AAAAAAAAAAAAAAAAAAAAA',
      'wh_AAAAAAAAAAAAAAAAAAAAAAA',
      'wh_AAAAAAAAAAAAAAAAAAAAA=',
      'wh_AAAAAAAAAAAAAAAAAAAAA+',
      'WH_AAAAAAAAAAAAAAAAAAAAAA',
      'xx_AAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      expect((await h.as('get', `/api/webhooks/${encodeURIComponent(id)}`)).status, id).toBe(404);
    }
  });

  it('still finds a real webhook, ids with `-` and `_` included', async () => {
    const id = 'wh_Zz09-_AAAAAAAAAAAAAAAA';
    await h.intake.add(webhookOf(id, 'quote.status_changed', ['notify_customer'], '2'));
    const status = await h.as('get', `/api/webhooks/${id}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ webhook_id: id, entity_id: 'Q-2' });
    const replay = await h.as('post', `/api/webhooks/${id}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ webhook_id: id, replayed: [] });
  });
});
