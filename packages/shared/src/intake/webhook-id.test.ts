import { describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '../events/acknowledgement.js';
import { newWebhookId } from './webhook-id.js';

describe('newWebhookId', () => {
  it('is `wh_` and 22 base64url characters, as the ack schema and the operator API expect', () => {
    const id = newWebhookId();
    expect(id).toMatch(/^wh_[A-Za-z0-9_-]{22}$/);
    expect(
      acknowledgementSchema.safeParse({
        received: true,
        processed_at: new Date().toISOString(),
        webhook_id: id,
        actions_triggered: [],
      }).success,
    ).toBe(true);
  });

  it('never repeats across refills of its pool of random bytes', () => {
    const ids = Array.from({ length: 1000 }, () => newWebhookId());
    expect(new Set(ids).size).toBe(ids.length);
  });
});
