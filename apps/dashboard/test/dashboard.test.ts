import type { Queue } from 'bullmq';
import { publishSenderClocks, readSenderClocks, SenderClocks } from '@pw/shared/intake';
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RejectedChanges } from '@pw/records';
import { CircuitBoard } from '@pw/shared/circuits';
import { openApiDocument } from '@pw/shared/openapi';
import { noCall, OutcomeStore } from '@pw/shared/outcomes';
import { actionJobId, ActionQueues, Partitions, QUEUE_NAMES } from '@pw/shared/queue';
import type { ActionJobData } from '@pw/shared/queue';
import { AuditLog } from '@pw/shared/records';
import { DEFAULT_RULES, RulesStore } from '@pw/shared/rules';
import { createLogger } from '@pw/shared/runtime';
import { deleteKeys, startIntake, testRedisUrl, uniquePrefix } from '@pw/test-utils';
import type { TestIntake } from '@pw/test-utils';
import { createDashboard } from '../src/app.js';
import { LoginLimit } from '../src/login-limit.js';
import { createDashboardMetrics } from '../src/metrics.js';
import type { DashboardMetrics } from '../src/metrics.js';
import { Operator } from '../src/operator.js';
import { readTrends } from '../src/trends.js';
import type { Trends } from '../src/trends.js';
import { webhookOf } from './harness.js';

const prefix = uniquePrefix();
const auth = { user: 'operator', password: 'correct horse' };
let redis: Redis;
let actions: Queue<ActionJobData>;
let onePartition: ActionQueues;
let outcomes: OutcomeStore;
let intake: TestIntake;
let app: ReturnType<typeof createDashboard>;
let metrics: DashboardMetrics;
let failing: Worker<ActionJobData>;
/** Actions the stand-in worker lets through; the rest fail for good. */
const healthy = new Set<string>();

const action = (
  webhookId: string,
  name: ActionJobData['action'],
  eventType: ActionJobData['event_type'],
): ActionJobData => ({
  webhook_id: webhookId,
  action: name,
  event_type: eventType,
  event: {},
  backoff: { type: 'fixed', delay_ms: 1 },
});

/** Takes a webhook in as the ingress does: its record, and its action jobs for the stand-in. */
async function webhook(
  id: string,
  eventType: ActionJobData['event_type'],
  names: ActionJobData['action'][],
) {
  await intake.add(webhookOf(id, eventType, names));
}

/** Runs `check` while the stand-in worker takes no job, then removes the jobs added meanwhile. */
async function withStandInPaused(check: () => Promise<void>) {
  await failing.pause();
  const before = new Set((await actions.getWaiting()).map((job) => job.id));
  try {
    await check();
  } finally {
    for (const job of await actions.getWaiting()) if (!before.has(job.id)) await job.remove();
    await failing.resume();
  }
}

let subscriber: Redis;
const settled = (id: string) => outcomes.waitUntilFinished(id, subscriber, { timeoutMs: 10_000 });

beforeAll(() => {
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  subscriber = redis.duplicate();
  onePartition = new ActionQueues(redis, new Partitions(prefix));
  actions = onePartition.partition(0);
  outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 600 });
  intake = startIntake(redis, prefix, {
    retry: { attempts: 2, backoff: { type: 'fixed', delay_ms: 1 } },
    recordTtlSeconds: 600,
  });
  // A real BullMQ worker standing in for ours: it records outcomes the same way.
  failing = new Worker<ActionJobData>(
    QUEUE_NAMES.actions,
    async (job) => {
      const attempts = await outcomes.started(job.data.webhook_id, job.data.action);
      if (healthy.has(job.data.action))
        return outcomes.completed(job.data.webhook_id, job.data.action, noCall(), attempts);
      await outcomes.failed(job.data.webhook_id, job.data.action, 'failed', 'POST /x answered 400');
      throw new UnrecoverableError('POST /x answered 400');
    },
    { connection: redis, prefix },
  );
  metrics = createDashboardMetrics([actions], { refreshMs: 50 });
  app = createDashboard({
    queues: [actions],
    operator: new Operator({ actions: onePartition, outcomes: [outcomes], redis }),
    circuits: new CircuitBoard(redis, { queuePrefix: prefix }),
    actions: onePartition,
    rules: new RulesStore(redis, { queuePrefix: prefix, seed: DEFAULT_RULES }),
    metrics: metrics.registry,
    trends: () => readTrends(redis, prefix, [actions]),
    senderClocks: () => readSenderClocks(redis, prefix),
    log: createLogger({ name: 'dashboard-test', level: 'silent' }),
    audit: new AuditLog(redis, prefix, createLogger({ name: 'dashboard-test', level: 'silent' })),
    rejected: new RejectedChanges(redis, prefix),
    credentials: auth,
    logins: new LoginLimit(redis, prefix),
  });
});
afterAll(async () => {
  metrics.close();
  await failing.close();
  await Promise.all([actions.close(), intake.close()]);
  await deleteKeys(redis, prefix);
  subscriber.disconnect();
  redis.disconnect();
});

const get = (path: string) => request(app).get(path).auth(auth.user, auth.password);
const post = (path: string, body: object = {}) =>
  request(app).post(path).auth(auth.user, auth.password).send(body);

describe('basic auth', () => {
  it('refuses the board and the API without the right credentials, but not /healthz and /metrics', async () => {
    expect((await request(app).get('/admin/queues')).status).toBe(401);
    expect((await request(app).get('/api/rules')).status).toBe(401);
    expect((await request(app).get('/api/rules').auth(auth.user, 'wrong')).status).toBe(401);
    expect((await request(app).get('/api/rules').auth('someone', auth.password)).status).toBe(401);
    expect((await request(app).get('/healthz')).status).toBe(200);
    expect((await request(app).get('/metrics')).status).toBe(200);
    expect((await get('/admin/queues')).status).toBe(200);
  });

  it('answers with security headers', async () => {
    const response = await get('/api/rules');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(response.headers['x-powered-by']).toBeUndefined();
  });
});

describe('API documentation at /docs', () => {
  it('is behind basic auth, and /docs leads to /docs/', async () => {
    expect((await request(app).get('/docs/')).status).toBe(401);
    expect((await request(app).get('/docs/openapi.json')).status).toBe(401);
    const redirect = await get('/docs');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('docs/');
  });

  it('serves the generated document, the ingress as its server', async () => {
    const response = await get('/docs/openapi.json');
    expect(response.status).toBe(200);
    const served = response.body as ReturnType<typeof openApiDocument>;
    expect(served.paths).toEqual(openApiDocument().paths);
    expect(served.components).toEqual(openApiDocument().components);
    expect(JSON.stringify(served.servers)).toContain('http://localhost:3000');
  });

  it('renders it with Swagger UI from the dashboard itself, without inline scripts', async () => {
    const page = await get('/docs/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const scripts = [...page.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.map(([, attributes]) => attributes)).toEqual([
      ' src="swagger-ui-bundle.js"',
      ' src="init.js"',
    ]);
    expect(scripts.every(([, , body]) => body === '')).toBe(true);
    for (const [asset, type] of [
      ['swagger-ui-bundle.js', /javascript/],
      ['init.js', /javascript/],
      ['swagger-ui.css', /text\/css/],
    ] as const) {
      const response = await get(`/docs/${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers['content-type']).toMatch(type);
    }
    expect((await get('/docs/init.js')).text).toContain("url: 'openapi.json'");
  });
});

/** /api/trends, with the hour's actions completed, failed and held added up. */
async function trendTotals() {
  const trends = (await get('/api/trends')).body as Trends;
  expect(trends.minutes).toHaveLength(60);
  const sum = (name: 'completed' | 'failed' | 'held') =>
    trends.minutes.reduce((total, minute) => total + minute[name], 0);
  return { ...trends, completed: sum('completed'), failed: sum('failed'), held: sum('held') };
}

// The describes below share the queue, the stand-in worker and its healthy actions, and run in
// this order: the dead letters, the queue depths and the trends count what came before them.
describe('webhook status and replay', () => {
  it('404 for an unknown webhook', async () => {
    expect((await get('/api/webhooks/wh_unknown')).status).toBe(404);
  });

  it('a webhook whose actions all wait is `queued`', async () => {
    // Taken in while no worker takes its job.
    await withStandInPaused(async () => {
      await webhook('wh_queued0000000000000000', 'quote.status_changed', ['notify_customer']);
      const body = (await get('/api/webhooks/wh_queued0000000000000000')).body as {
        state: string;
        actions: { state: string }[];
      };
      expect(body.state).toBe('queued');
      expect(body.actions).toEqual([
        {
          name: 'notify_customer',
          state: 'waiting',
          attempts: 0,
          last_error: null,
          completed_at: null,
          skipped: null,
          held: null,
          // No record store in this test: no attempt history.
          history: [],
        },
      ]);
    });
  });

  it('a partly failed webhook shows which action failed and why; replay completes it once fixed', async () => {
    healthy.add('notify_customer');
    await webhook('wh_partly0000000000000000', 'quote.status_changed', [
      'notify_customer',
      'lock_price',
    ]);
    await settled('wh_partly0000000000000000');
    const partly = (await get('/api/webhooks/wh_partly0000000000000000')).body as {
      state: string;
      actions: { name: string; state: string; last_error: string | null }[];
    };
    expect(partly.state).toBe('failed');
    expect(partly.actions.find((a) => a.name === 'lock_price')).toMatchObject({
      state: 'failed',
      last_error: 'POST /x answered 400',
    });
    expect(partly.actions.find((a) => a.name === 'notify_customer')).toMatchObject({
      state: 'completed',
    });

    healthy.add('lock_price');
    const replay = await post('/api/webhooks/wh_partly0000000000000000/replay');
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({
      webhook_id: 'wh_partly0000000000000000',
      replayed: ['lock_price'],
    });
    const done = await settled('wh_partly0000000000000000');
    expect(done.state).toBe('completed');
    expect(done.actions.find((a) => a.name === 'lock_price')?.attempts).toBe(2);
    expect((await post('/api/webhooks/wh_unknown/replay')).status).toBe(404);
  });
});

describe('held by an open circuit', () => {
  it('an action held by an open circuit that then fails without a call reads failed, no longer held', async () => {
    await withStandInPaused(async () => {
      const id = 'wh_heldfail00000000000000';
      await webhook(id, 'quote.status_changed', ['notify_customer']);
      await outcomes.held(id, 'notify_customer');
      const held = (await get(`/api/webhooks/${id}`)).body as { actions: { held: string }[] };
      expect(held.actions[0]?.held).toBe('circuit_open');
      // The circuit closed; the identity provider then refused the token: no call was made.
      await outcomes.failed(id, 'notify_customer', 'failed', 'token_refused: invalid_client');
      const body = (await get(`/api/webhooks/${id}`)).body as {
        state: string;
        actions: { state: string; held: string | null; last_error: string }[];
      };
      expect(body.state).toBe('failed');
      expect(body.actions[0]).toMatchObject({
        state: 'failed',
        held: null,
        last_error: 'token_refused: invalid_client',
      });
    });
  });
});

describe('a running call', () => {
  it('reads an action as its record says, never off BullMQ: a job taken reads `waiting` until the worker writes its start, then `active` with its call counted', async () => {
    await withStandInPaused(async () => {
      const id = 'wh_running000000000000000';
      await webhook(id, 'quote.status_changed', ['notify_customer', 'lock_price']);
      const taker = new Worker<ActionJobData>(QUEUE_NAMES.actions, null, {
        connection: redis,
        prefix,
      });
      const read = async () => {
        const response = await get(`/api/webhooks/${id}`);
        const body = response.body as {
          state: string;
          actions: { name: string; state: string; attempts: number }[];
        };
        return [
          body.state,
          body.actions.map(({ name, state, attempts }) => [name, state, attempts]),
        ];
      };
      try {
        // Active in BullMQ; the record has no start yet (the worker has not begun the try).
        const job = await taker.getNextJob('taker-token');
        expect(job?.id).toBe(actionJobId(id, 'notify_customer'));
        expect(await read()).toEqual([
          'queued',
          [
            ['notify_customer', 'waiting', 0],
            ['lock_price', 'waiting', 0],
          ],
        ]);
        // The worker's start, as it writes it before the call.
        await outcomes.started(id, 'notify_customer');
        expect(await read()).toEqual([
          'processing',
          [
            ['notify_customer', 'active', 1],
            ['lock_price', 'waiting', 0],
          ],
        ]);
        await job?.moveToCompleted('done', 'taker-token', false);
      } finally {
        await taker.close();
      }
    });
  });
});

describe('dead letters and queue depth', () => {
  it('lists dead letters with filters and bulk-replays exactly the matching ones', async () => {
    healthy.clear();
    await webhook('wh_deadA00000000000000000', 'sales_opportunity.status_changed', [
      'update_crm',
      'update_metrics',
    ]);
    await webhook('wh_deadB00000000000000000', 'sales_opportunity.status_changed', ['update_crm']);
    await settled('wh_deadA00000000000000000');
    await settled('wh_deadB00000000000000000');
    const crm = (await get('/api/dead-letters?action=update_crm')).body as {
      dead_letters: { webhook_id: string; failed_reason: string }[];
    };
    expect(crm.dead_letters.map((d) => d.webhook_id).sort()).toEqual([
      'wh_deadA00000000000000000',
      'wh_deadB00000000000000000',
    ]);
    expect(crm.dead_letters[0]?.failed_reason).toBe('POST /x answered 400');
    const bySales = (await get('/api/dead-letters?event_type=sales_opportunity.status_changed'))
      .body as { dead_letters: unknown[] };
    expect(bySales.dead_letters).toHaveLength(3);

    healthy.add('update_crm');
    const replay = await post('/api/dead-letters/replay', { action: 'update_crm' });
    expect(replay.status).toBe(202);
    expect(
      (replay.body as { replayed: { action: string }[] }).replayed.map((r) => r.action),
    ).toEqual(['update_crm', 'update_crm']);
    await settled('wh_deadB00000000000000000');
    const left = (await get('/api/dead-letters')).body as {
      dead_letters: { webhook_id: string; action: string }[];
    };
    expect(left.dead_letters.map((d) => `${d.webhook_id}:${d.action}`)).toEqual([
      'wh_deadA00000000000000000:update_metrics',
    ]);
  });

  it('/metrics shows queue depth by state, read at most METRICS_REFRESH_MS before', async () => {
    // Read every 50 ms here: the figures of the jobs above arrive within a few reads.
    const scrape = async () => (await request(app).get('/metrics')).text;
    await expect.poll(scrape).toContain('queue_jobs{queue="actions",state="failed"} 1');
    expect(await scrape()).toMatch(/queue_jobs\{queue="actions",state="completed"\} [1-9]/);
  });
});

describe('trends', () => {
  it("/api/trends counts the hour's actions completed, failed and held, and the oldest waiting job's age", async () => {
    const before = await trendTotals();
    expect(before.oldest_waiting_seconds).toEqual({ actions: null });
    expect(Date.parse(before.minutes.at(-1)?.at ?? '')).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(before.minutes.at(-1)?.at ?? '')).toBeGreaterThan(Date.now() - 60_000);

    healthy.clear();
    healthy.add('generate_documents');
    await webhook('wh_trendA0000000000000000', 'contract.status_changed', [
      'generate_documents',
      'start_billing',
    ]);
    await settled('wh_trendA0000000000000000');
    await withStandInPaused(async () => {
      // An action job added 90 s ago that no worker has taken, first in line...
      await actions.add(
        'notify_customer',
        action('wh_trendC0000000000000000', 'notify_customer', 'quote.status_changed'),
        {
          jobId: actionJobId('wh_trendC0000000000000000', 'notify_customer'),
          timestamp: Date.now() - 90_000,
        },
      );
      // ...and a webhook taken in whose one action is held by an open circuit.
      await webhook('wh_trendB0000000000000000', 'quote.status_changed', ['notify_customer']);
      await outcomes.held('wh_trendB0000000000000000', 'notify_customer');

      const after = await trendTotals();
      expect(after.completed - before.completed).toBe(1);
      expect(after.failed - before.failed).toBe(1);
      expect(after.held - before.held).toBe(1);
      expect(after.oldest_waiting_seconds.actions).toBeGreaterThanOrEqual(90);
      expect(after.oldest_waiting_seconds.actions).toBeLessThan(150);
      const age = async () => {
        const text = (await request(app).get('/metrics')).text;
        return Number(/queue_oldest_waiting_seconds\{queue="actions"\} ([\d.]+)/.exec(text)?.[1]);
      };
      await expect.poll(age).toBeGreaterThanOrEqual(90);
    });
  });
});

describe('routing rules', () => {
  it('reads the seeded rules, refuses an invalid document whole, and replaces them with a valid one', async () => {
    const first = (await get('/api/rules')).body as { rules: unknown[]; updated_by: string | null };
    expect(first.rules).toHaveLength(DEFAULT_RULES.length);
    expect(first.updated_by).toBeNull();

    const invalid = await request(app)
      .put('/api/rules')
      .auth(auth.user, auth.password)
      .send({
        rules: [
          { event_type: 'quote.status_changed', action: 'notify_customer' },
          { event_type: 'quote.status_changed', action: 'start_billing' },
        ],
      });
    expect(invalid.status).toBe(400);
    expect(
      (invalid.body as { error: { details: { path: string }[] } }).error.details.map((d) => d.path),
    ).toEqual(['1.action']);
    expect(((await get('/api/rules')).body as { rules: unknown[] }).rules).toHaveLength(
      DEFAULT_RULES.length,
    );

    const valid = await request(app)
      .put('/api/rules')
      .auth(auth.user, auth.password)
      .send({ rules: [{ event_type: 'quote.status_changed', action: 'notify_customer' }] });
    expect(valid.status).toBe(200);
    const now = (await get('/api/rules')).body as { rules: unknown[]; updated_by: string };
    expect(now.rules).toEqual([
      { event_type: 'quote.status_changed', action: 'notify_customer', enabled: true, when: [] },
    ]);
    expect(now.updated_by).toBe(auth.user);
  });
});

describe('routing rules preview', () => {
  it('previews the actions an event would set off, under the rules given or the current ones', async () => {
    const preview = (body: object) =>
      request(app).post('/api/rules/preview').auth(auth.user, auth.password).send(body);
    const approved = {
      event_type: 'quote.status_changed',
      quote_id: 'Q-1',
      status: 'Approved',
      metadata: { market: 'FR' },
    };
    const rules = [
      { event_type: 'quote.status_changed', action: 'notify_customer' },
      {
        event_type: 'quote.status_changed',
        action: 'lock_price',
        when: [{ path: 'metadata.market', equals: 'DE' }],
      },
    ];
    expect((await preview({ rules, event: approved })).body).toEqual({
      actions: ['notify_customer'],
    });
    const german = { ...approved, metadata: { market: 'de' } };
    expect((await preview({ rules, event: german })).body).toEqual({
      actions: ['notify_customer', 'lock_price'],
    });
    await request(app)
      .put('/api/rules')
      .auth(auth.user, auth.password)
      .send({ rules: DEFAULT_RULES })
      .expect(200);
    expect((await preview({ event: approved })).body).toEqual({
      actions: ['notify_customer', 'update_sales_opportunity', 'lock_price'],
    });

    const badRules = await preview({
      rules: [{ ...rules[0], action: 'start_billing' }],
      event: approved,
    });
    expect(badRules.status).toBe(400);
    expect(badRules.body).toMatchObject({
      error: { code: 'invalid_rules', details: [{ path: '0.action' }] },
    });
    for (const event of [undefined, [], { event_type: 'invoice.paid' }] as unknown[]) {
      const badEvent = await preview({ rules, event: event as object });
      expect(badEvent.status).toBe(400);
      expect(badEvent.body).toMatchObject({ error: { code: 'invalid_event' } });
    }
    // A preview changes nothing.
    expect(((await get('/api/rules')).body as { rules: unknown[] }).rules).toHaveLength(
      DEFAULT_RULES.length,
    );
  });
});

describe('sender clocks', () => {
  it("lists how far each sender's clock runs from the receiver's, as the ingress estimates it", async () => {
    const clocks = new SenderClocks();
    const now = Date.now();
    for (let i = 0; i < 5; i++) clocks.orderTime('partner-1', now - 120_000 + i, now + i);
    for (let i = 0; i < 5; i++) clocks.orderTime('partner-2', now + 30_000 + i, now + i);
    await publishSenderClocks(redis, prefix, clocks);
    const response = await get('/api/sender-clocks');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      senders: [
        { sender: 'partner-1', offset_ms: 120_000, samples: 5, at: expect.any(String) as string },
        { sender: 'partner-2', offset_ms: -30_000, samples: 5, at: expect.any(String) as string },
      ],
    });
  });
});
