// `/metrics` needs no credentials: a request costs Redis nothing, whatever `QUEUE_PARTITIONS` is.
// The dashboard reads the queue figures on its own clock, every METRICS_REFRESH_MS, and a scrape
// shows the last ones read (docs/operations.md#metrics).
import request from 'supertest';
import { expect, it } from 'vitest';
import { startDashboard, watchCommands } from './harness.js';

it('300 requests at 64 partitions make Redis run no command on the queues', async () => {
  // Read once at the start, then not again within the test.
  const h = startDashboard({ partitions: 64, metricsRefreshMs: 600_000 });
  try {
    const first = await request(h.app).get('/metrics');
    expect(first.status).toBe(200);
    expect(first.text).toContain('queue_jobs{queue="actions",state="waiting"} 0');
    const seen = await watchCommands(h, async () => {
      for (let i = 0; i < 300; i += 1) {
        expect((await request(h.app).get('/metrics')).status).toBe(200);
      }
    });
    expect(seen).toEqual([]);
  } finally {
    await h.close();
  }
});

it('a refresh reads each partition once: its cost does not grow with the requests', async () => {
  const h = startDashboard({ partitions: 4, metricsRefreshMs: 100 });
  try {
    await request(h.app).get('/metrics');
    let scrapes = 0;
    const seen = await watchCommands(h, async () => {
      const until = Date.now() + 1_000;
      while (Date.now() < until) {
        await request(h.app).get('/metrics');
        scrapes += 1;
      }
    });
    // A refresh reads each partition's oldest waiting job once (LINDEX): about ten refreshes in
    // the second, whatever the number of scrapes (hundreds).
    const refreshes = seen.filter(([command]) => command === 'LINDEX').length / 4;
    expect(scrapes).toBeGreaterThan(50);
    expect(refreshes).toBeGreaterThanOrEqual(2);
    expect(refreshes).toBeLessThan(scrapes / 5);
  } finally {
    await h.close();
  }
});
