import { once } from 'node:events';
import { connect } from 'node:net';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { QUEUE_NAMES } from '@pw/shared/queue';
import type { Acknowledgement } from '@pw/shared/events';
import type { ActionJobData } from '@pw/shared/queue';
import { actionJobsOf } from './harness.js';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  signedEvent,
  testRedisUrl,
  TEST_SECRET,
  uniquePrefix,
} from '@pw/test-utils';

const prefix = uniquePrefix();
let port: number;
let ingress: ChildRun;
const env = () => ({
  REDIS_URL: testRedisUrl(),
  QUEUE_PREFIX: prefix,
  INGRESS_PORT: String(port),
  WEBHOOK_SECRETS: `${TEST_SECRET},older-secret`,
  LOG_LEVEL: 'info',
});

/** Opens a connection to the ingress, writes `head`, then `drip` once a second until it closes. */
async function trickle(head: string, drip: string) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(head);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  // One byte a second: never done, never idle long enough for an idle time-out.
  const dripping = setInterval(() => socket.write(drip), 1000);
  const started = Date.now();
  await once(socket, 'close');
  clearInterval(dripping);
  return { seconds: (Date.now() - started) / 1000, answer };
}

/** Each acknowledgement's action jobs are in Redis, each for its webhook. */
async function expectActionJobsEnqueued(acks: Acknowledgement[]): Promise<void> {
  const queue = new Queue<ActionJobData>(QUEUE_NAMES.actions, {
    connection: { url: testRedisUrl() },
    prefix,
  });
  for (const ack of acks) {
    const jobs = await actionJobsOf({ queue }, ack);
    expect(jobs.map((job) => job?.data.webhook_id)).toEqual([
      ack.webhook_id,
      ack.webhook_id,
      ack.webhook_id,
    ]);
  }
  await queue.close();
}

describe('the ingress process, as `npm start` runs it', () => {
  beforeAll(async () => {
    port = await freePort();
    ingress = ChildRun.tsx('apps/ingress/src/main.ts', env());
    await ingress.printed('ingress listening');
  });
  afterAll(async () => {
    await ingress.stop('SIGKILL');
    const redis = newTestRedis();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('`npm run send -- quote --status approved --count 2` prints two acks, enqueued in Redis', async () => {
    const send = ChildRun.start(
      [
        'npm',
        'run',
        '-s',
        'send',
        '--',
        'quote',
        '--status',
        'approved',
        '--count',
        '2',
        '--url',
        `http://127.0.0.1:${port}`,
      ],
      env(),
    );
    expect(await send.exited).toBe(0);
    const acks = send.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => acknowledgementSchema.parse(JSON.parse(line)));
    expect(acks).toHaveLength(2);
    expect(acks[0]!.actions_triggered).toEqual([
      'notify_customer',
      'update_sales_opportunity',
      'lock_price',
    ]);
    expect(acks[0]!.webhook_id).not.toBe(acks[1]!.webhook_id);
    await expectActionJobsEnqueued(acks);
  });

  it('logs each acceptance, and no secret and no signature', async () => {
    await ingress.printed('webhook accepted');
    expect(ingress.output).not.toContain(TEST_SECRET);
    expect(ingress.output).not.toContain('older-secret');
    expect(ingress.output).not.toMatch(/sha256=[0-9a-f]{64}/);
  });

  it('closes a connection that trickles its headers after 10 s, and one that trickles its body after 30 s', async () => {
    const [headers, body] = await Promise.all([
      trickle('POST /webhooks/quote-status HTTP/1.1\r\nHost: x\r\n', 'X'),
      trickle(
        'POST /webhooks/quote-status HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
        ' ',
      ),
    ]);
    expect(headers.answer).toMatch(/^HTTP\/1\.1 408/);
    expect(headers.seconds).toBeLessThan(20);
    expect(body.answer).toMatch(/^HTTP\/1\.1 408/);
    expect(body.seconds).toBeLessThan(40);
  }, 60_000);

  it('stops on SIGTERM with exit code 0', async () => {
    expect(await ingress.stop('SIGTERM')).toBe(0);
    expect(ingress.output).toContain('stopped');
  });
});

// None of these gets as far as listening; each starts from the settings of the ingress above.
describe('the ingress process refuses to start', () => {
  it('refuses to start in production without WEBHOOK_SECRETS, listing every problem', async () => {
    const bad = ChildRun.tsx('apps/ingress/src/main.ts', {
      ...env(),
      NODE_ENV: 'production',
      WEBHOOK_SECRETS: '',
      INGRESS_PORT: 'eighty',
    });
    expect(await bad.exited).toBe(1);
    expect(bad.output).toContain('WEBHOOK_SECRETS');
    expect(bad.output).toContain('INGRESS_PORT');
    expect(bad.output.trim().split('\n')[0]).toBe('ingress: Invalid configuration:');
  });

  it('refuses to start in production (however NODE_ENV is spelt) with the development secret or a short one, without printing it', async () => {
    const bad = ChildRun.tsx('apps/ingress/src/main.ts', {
      ...env(),
      NODE_ENV: 'Production',
      WEBHOOK_SECRETS: 'dev-secret,short-secret-a',
    });
    expect(await bad.exited).toBe(1);
    expect(bad.output).toContain('the public development secret');
    expect(bad.output).toContain('14 bytes long; production needs at least 32');
    expect(bad.output).not.toContain('short-secret-a');
  });

  it('refuses to start with a NODE_ENV other than development, test or production (a typo: prod)', async () => {
    const bad = ChildRun.tsx('apps/ingress/src/main.ts', {
      ...env(),
      NODE_ENV: 'prod',
      INGRESS_PORT: String(await freePort()),
    });
    try {
      // Were `prod` taken, the ingress would start with the development defaults and listen.
      const listening = bad.printed('ingress listening').then(
        () => 'listening',
        () => new Promise<never>(() => undefined),
      );
      expect(await Promise.race([bad.exited, listening])).toBe(1);
      expect(bad.output.trim().split('\n')).toEqual([
        'ingress: Invalid configuration:',
        '  - NODE_ENV: must be development, test or production (any letter case)',
      ]);
    } finally {
      await bad.stop('SIGKILL');
    }
  });
});

describe('INGRESS_WORKERS: several ingress processes on one port', () => {
  it('serves from every process, adds up their metrics, and stops all on SIGTERM with 0', async () => {
    const port = await freePort();
    const clusterPrefix = uniquePrefix();
    const run = ChildRun.tsx('apps/ingress/src/main.ts', {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: clusterPrefix,
      INGRESS_PORT: String(port),
      INGRESS_WORKERS: '2',
      WEBHOOK_SECRETS: TEST_SECRET,
      LOG_LEVEL: 'info',
    });
    try {
      await run.printed('ingress listening', 2);
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          fetch(`http://127.0.0.1:${port}/webhooks/quote-status`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', connection: 'close' },
            body: JSON.stringify(signedEvent('quote')),
          }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      await run.printed('webhook accepted', 40);
      const pids = new Set(
        run.output
          .split('\n')
          .filter((line) => line.includes('webhook accepted'))
          .map((line) => (JSON.parse(line) as { pid: number }).pid),
      );
      expect(pids.size).toBe(2);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(
        /webhooks_received_total\{event_type="quote.status_changed",outcome="accepted"\} 40\b/,
      );
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(run.count('"stopped"')).toBe(3);
    } finally {
      await run.stop('SIGKILL');
      const redis = newTestRedis();
      await deleteKeys(redis, clusterPrefix);
      redis.disconnect();
    }
  });
});
