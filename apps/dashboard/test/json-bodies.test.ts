// The operator API reads request bodies only as application/json: a form or text/plain body is
// what a page can send anywhere without a CORS preflight, so it is refused whole rather than read
// as an empty filter that matches everything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES } from '@pw/shared/rules';
import { startDashboard } from './harness.js';
import type { DashboardHarness } from './harness.js';

let h: DashboardHarness;
beforeAll(() => {
  h = startDashboard();
});
afterAll(() => h.close());

const unsupported = {
  code: 'unsupported_media_type',
  message: 'Request bodies must be application/json',
  details: [],
};

describe('request bodies of the operator API', () => {
  it('answers 415 unsupported_media_type to a form or text/plain body, and changes nothing', async () => {
    const form = await h
      .as('post', '/api/dead-letters/replay')
      .type('form')
      .send('action=update_crm');
    expect(form.status).toBe(415);
    expect((form.body as { error: unknown }).error).toEqual(unsupported);

    const text = await h
      .as('put', '/api/rules')
      .type('text/plain')
      .send('{"rules":[{"event_type":"quote.status_changed","action":"notify_customer"}]}');
    expect(text.status).toBe(415);
    expect((text.body as { error: unknown }).error).toEqual(unsupported);
    const rules = (await h.as('get', '/api/rules')).body as { rules: unknown[] };
    expect(rules.rules).toHaveLength(DEFAULT_RULES.length);
  });

  it('takes a POST with no body, and JSON with or without a charset', async () => {
    expect((await h.as('post', '/api/dead-letters/replay')).status).toBe(202);
    const json = await h.as('post', '/api/dead-letters/replay').send({ action: 'update_crm' });
    expect(json.status).toBe(202);
    const charset = await h
      .as('post', '/api/dead-letters/replay')
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify({ action: 'update_crm' }));
    expect(charset.status).toBe(202);
  });
});
