// `/metrics` needs no credentials: a request costs Redis nothing, whatever `QUEUE_PARTITIONS` is.
// The dashboard reads the queue figures on its own clock, every METRICS_REFRESH_MS, and a scrape
// shows the last ones read (docs/operations.md#metrics).
import request from 'supertest';
import { expect, it } from 'vitest';
import { RedisMonitor, testRedisUrl } from '@pw/test-utils';
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
    const started = Date.now();
    const seen = await RedisMonitor.during(
      testRedisUrl(),
      async () => {
        const until = Date.now() + 1_000;
        while (Date.now() < until) {
          await request(h.app).get('/metrics');
          scrapes += 1;
        }
      },
      ({ args }) => args.some((arg) => arg.includes(h.prefix)),
    );
    const watchedMs = Date.now() - started;
    // A refresh's reads of the partitions' wait lists (LINDEX, in BullMQ's scripts) come within a
    // few ms of each other; refreshes are 100 ms apart at least (a busy machine's timers fire
    // late, never early). About ten in the second, whatever the number of scrapes (hundreds).
    const times = seen.filter(({ args }) => args[0] === 'LINDEX').map(({ time }) => Number(time));
    const refreshes = times.filter((time, i) => i === 0 || time - times[i - 1]! > 0.05).length;
    expect(scrapes).toBeGreaterThan(20);
    expect(refreshes).toBeGreaterThanOrEqual(2);
    expect(refreshes).toBeLessThanOrEqual(watchedMs / 100 + 1);
    expect(refreshes).toBeLessThan(scrapes / 5);
  } finally {
    await h.close();
  }
});
