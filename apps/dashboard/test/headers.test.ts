// What every answer says about itself: authenticated answers are never cached (`Cache-Control:
// no-store`), and no answer names the framework (`X-Powered-By`), the queue board's included,
// which is an Express app of bull-board's own.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
beforeAll(() => {
  h = startDashboard();
});
afterAll(() => h.close());

describe('answer headers', () => {
  it('authenticated answers carry Cache-Control: no-store: API, board, its files, /docs', async () => {
    const page = await h.as('get', '/admin/queues');
    expect(page.status).toBe(200);
    const boardFile = /(static\/[^"']+\.js)/.exec(page.text)?.[1];
    expect(boardFile).toBeDefined();
    for (const path of [
      '/api/rules',
      '/api/dead-letters',
      '/api/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA',
      '/admin/queues',
      '/admin/queues/queue/actions',
      '/admin/queues/api/queues',
      `/admin/queues/${boardFile}`,
      '/docs/',
      '/docs/openapi.json',
      '/docs/swagger-ui-bundle.js',
      '/no/such/page',
    ]) {
      const response = await h.as('get', path);
      expect(response.status, path).toBeLessThan(500);
      expect(response.headers['cache-control'], path).toBe('no-store');
    }
    const retry = await h.as('put', '/admin/queues/api/queues/actions/retry/failed');
    expect(retry.status).toBe(200);
    expect(retry.headers['cache-control']).toBe('no-store');
  });

  it('no answer carries X-Powered-By, the board routes included', async () => {
    const answers = [
      await request(h.app).get('/healthz'),
      await request(h.app).get('/metrics'),
      await request(h.app).get('/admin/queues'),
      await h.as('get', '/admin/queues'),
      await h.as('get', '/admin/queues/api/queues'),
      await h.as('get', '/admin/queues/api/queues/nosuchqueue/1'),
      await h.as('put', '/admin/queues/api/queues/actions/retry/failed'),
      await h.as('post', '/admin/queues/api/queues/actions/add').send({ name: 'x', data: {} }),
      await h.as('get', '/admin/queues/no/such/page'),
      await h.as('get', '/api/rules'),
      await h.as('get', '/docs/'),
    ];
    for (const response of answers) {
      expect(
        response.headers['x-powered-by'],
        `${response.status} ${response.text.slice(0, 80)}`,
      ).toBeUndefined();
    }
  });
});
