// The record store's quarantine: summaries that weigh the same whatever the kept events weigh, and
// the events read by id, a batch at a time, for a dry run.
import { expect } from 'vitest';
import { SUMMARY_PROBLEMS } from '@pw/shared/operator-api';
import { accepted, webhookId } from './changes.js';
import { test } from './store-fixture.js';

const problems = Array.from({ length: 15 }, (_, i) => ({
  path: `items.${i}.price`,
  message: 'Invalid input: expected string, received boolean',
}));

test('lists each quarantined webhook summed up: the size of its event, its first problems and how many', async ({
  store,
}) => {
  const event = { event_id: 'evt_heavy', notes: 'n'.repeat(60_000) };
  await store.writeBatch([
    accepted(1n, { webhook_id: webhookId(1), actions: [], problems, event }),
    accepted(2n, { webhook_id: webhookId(2), actions: [], problems: problems.slice(0, 1) }),
    accepted(3n, { webhook_id: webhookId(3) }),
  ]);
  const { quarantined } = await store.quarantined();
  const heavy = quarantined.find((item) => item.webhook_id === webhookId(1));
  expect(quarantined).toHaveLength(2);
  expect(heavy).toEqual({
    webhook_id: webhookId(1),
    event_type: 'quote.status_changed',
    entity_id: 'Q-1',
    received_at: '2025-03-01T10:00:00.000Z',
    // Its JSON text as the store writes it: a space after each of its two colons and its comma.
    size: JSON.stringify(event).length + 3,
    problem_count: 15,
    problems: problems.slice(0, SUMMARY_PROBLEMS),
  });
  expect(JSON.stringify(quarantined).length).toBeLessThan(3000);
  const events = await store.quarantinedEvents([webhookId(1), webhookId(2), webhookId(3)]);
  // The webhook that is not quarantined is left out.
  expect([...events.keys()].sort()).toEqual([webhookId(1), webhookId(2)]);
  expect(events.get(webhookId(1))).toEqual({ event, problems });
});
