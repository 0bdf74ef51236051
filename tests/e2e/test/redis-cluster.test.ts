// The system, unchanged, against a real three-node Redis Cluster (redis-server processes in
// cluster mode on loopback): one ingress, two workers and the dashboard with REDIS_CLUSTER=true
// and a hash-tagged QUEUE_PREFIX. Every event posted is processed once; repeats get the first
// ack; `npm run send --wait` and the dashboard read the outcomes; everything stops cleanly.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema, createRedis, duplicateRedis, OutcomeStore } from '@pw/shared';
import type { Acknowledgement, EventKind, RedisClient } from '@pw/shared';
import { startSandbox } from '@pw/sandbox';
import type { Sandbox } from '@pw/sandbox';
import { ChildRun, freePort, PrivateRedisCluster, signedEvent, TEST_SECRET } from '@pw/test-utils';

const EVENTS = 60;
const REPEATS = 6;
const PATHS: Record<EventKind, string> = {
  quote: '/webhooks/quote-status',
  contract: '/webhooks/contract-status',
  sales: '/webhooks/sales-opportunity',
};
// Statuses that set off more than the "always" actions: 3, 4 and 3 actions.
const STATUS: Record<EventKind, string> = {
  quote: 'approved',
  contract: 'active',
  sales: 'converted',
};
const KINDS: EventKind[] = ['quote', 'contract', 'sales'];

let cluster: PrivateRedisCluster | undefined;
let sandbox: Sandbox | undefined;
const runs: ChildRun[] = [];
const clients: RedisClient[] = [];
let ingressUrl = '';
let dashboardUrl = '';
let common: Record<string, string> = {};
const operator = { user: 'operator', password: 'cluster-test-password' };
const workerPorts: number[] = [];
// A prefix of the test's own, in braces: one hash tag, so each queue's keys share a slot.
const prefix = `{pwtest-${randomBytes(6).toString('hex')}}`;

beforeAll(async () => {
  // Both started at once; whichever did start is stopped in afterAll even if the other failed.
  const [started, sandboxStarted] = await Promise.allSettled([
    PrivateRedisCluster.start(3),
    startSandbox(),
  ]);
  if (started.status === 'fulfilled') cluster = started.value;
  if (sandboxStarted.status === 'fulfilled') sandbox = sandboxStarted.value;
  if (started.status === 'rejected') throw started.reason;
  if (sandboxStarted.status === 'rejected') throw sandboxStarted.reason;
  common = {
    // The seed named first does not hold the queues' slot: the apps must follow redirections.
    REDIS_URL: await started.value.urlWithOwnerLast(`${prefix}:webhooks:id`),
    REDIS_CLUSTER: 'true',
    QUEUE_PREFIX: prefix,
    NODE_ENV: 'development',
  };
  const ingressPort = await freePort();
  ingressUrl = `http://127.0.0.1:${ingressPort}`;
  runs.push(
    ChildRun.tsx('apps/ingress/src/main.ts', {
      ...common,
      INGRESS_PORT: String(ingressPort),
      WEBHOOK_SECRETS: TEST_SECRET,
    }),
  );
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    workerPorts.push(port);
    runs.push(
      ChildRun.tsx('apps/worker/src/main.ts', {
        ...common,
        ...sandboxStarted.value.env,
        WORKER_HEALTH_PORT: String(port),
        // Few jobs at once per worker, so both take part.
        WORKER_CONCURRENCY: '4',
      }),
    );
  }
  const dashboardPort = await freePort();
  dashboardUrl = `http://127.0.0.1:${dashboardPort}`;
  runs.push(
    ChildRun.tsx('apps/dashboard/src/main.ts', {
      ...common,
      DASHBOARD_PORT: String(dashboardPort),
      DASHBOARD_USER: operator.user,
      DASHBOARD_PASSWORD: operator.password,
    }),
  );
  await Promise.all([
    runs[0]!.printed('ingress listening'),
    runs[1]!.printed('worker running'),
    runs[2]!.printed('worker running'),
    runs[3]!.printed('dashboard listening'),
  ]);
});

afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  for (const client of clients) client.disconnect();
  await sandbox?.stop();
  await cluster?.destroy();
});

async function post(kind: EventKind, body: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${ingressUrl}${PATHS[kind]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.json() };
}

/** The sum of a counter's samples with `outcome="completed"` on a worker's /metrics. */
async function completedActions(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('actions_total{') && line.includes('outcome="completed"'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** Every outcome record completes, each action tried once, read on a cluster client. */
async function expectEachCompletedOnce(acks: Acknowledgement[]): Promise<void> {
  const redis = createRedis(common.REDIS_URL!, true, { maxRetriesPerRequest: 1 });
  const subscriber = duplicateRedis(redis);
  clients.push(redis, subscriber);
  const outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 600 });
  for (const ack of acks) {
    const outcome = await outcomes.waitUntilFinished(ack.webhook_id, subscriber, {
      timeoutMs: 30_000,
    });
    expect(outcome.state).toBe('completed');
    expect(outcome.actions.map((action) => action.name)).toEqual(ack.actions_triggered);
    expect(outcome.actions.every((action) => action.attempts === 1)).toBe(true);
  }
}

describe('against a three-node Redis Cluster', { timeout: 60_000 }, () => {
  it('processes every event once, with two workers and one ingress; repeats get the first ack', async () => {
    const events = Array.from({ length: EVENTS }, (_, index) => {
      const kind = KINDS[index % KINDS.length]!;
      return { kind, body: JSON.stringify(signedEvent(kind, { status: STATUS[kind] })) };
    });
    const answers = await Promise.all(events.map((event) => post(event.kind, event.body)));
    expect(answers.map((answer) => answer.status)).toEqual(events.map(() => 200));
    const acks: Acknowledgement[] = answers.map((answer) =>
      acknowledgementSchema.parse(answer.body),
    );
    expect(new Set(acks.map((ack) => ack.webhook_id)).size).toBe(EVENTS);

    // Repeats, some of them at once, get the first ack unchanged.
    const repeated = await Promise.all(
      events.slice(0, REPEATS).map((event) => post(event.kind, event.body)),
    );
    expect(repeated.map((answer) => answer.status)).toEqual(repeated.map(() => 200));
    expect(repeated.map((answer) => answer.body)).toEqual(acks.slice(0, REPEATS));

    await expectEachCompletedOnce(acks);

    // The partner API saw one call per (webhook, action), and nothing else.
    const expected = acks.flatMap((ack) =>
      ack.actions_triggered.map((action) => `${ack.webhook_id}:${action}`),
    );
    expect(expected).toHaveLength((EVENTS / 3) * (3 + 4 + 3));
    const keys = sandbox!.api.calls.map((call) => call.headers['idempotency-key']);
    expect([...keys].sort()).toEqual([...expected].sort());

    // Both workers took part, and together made every call.
    const perWorker = await Promise.all(workerPorts.map(completedActions));
    expect(perWorker.every((count) => count > 0)).toBe(true);
    expect(perWorker.reduce((a, b) => a + b, 0)).toBe(expected.length);
  });

  it('`npm run send --wait` and the dashboard read outcomes from the cluster', async () => {
    const send = ChildRun.start(
      ['npm', 'run', '-s', 'send', '--', 'contract', '--status', 'active', '--wait'],
      { ...common, INGRESS_PORT: new URL(ingressUrl).port, WEBHOOK_SECRETS: TEST_SECRET },
    );
    expect(await send.exited).toBe(0);
    const [ack, outcome] = send.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(outcome).toMatchObject({ webhook_id: ack?.webhook_id, state: 'completed' });

    const auth = `Basic ${Buffer.from(`${operator.user}:${operator.password}`).toString('base64')}`;
    const response = await fetch(`${dashboardUrl}/api/webhooks/${String(ack?.webhook_id)}`, {
      headers: { authorization: auth },
    });
    expect(response.status).toBe(200);
    // The dashboard's answer adds each action's attempt history and the trace id, both known only
    // to the record store (none here: history empty, trace_id null).
    const answer = (await response.json()) as { actions: { history: unknown[] }[] };
    expect(answer.actions.map((action) => action.history)).toEqual(answer.actions.map(() => []));
    expect({
      ...answer,
      actions: answer.actions.map(({ history: _history, ...action }) => action),
    }).toEqual({ ...outcome, trace_id: null });
    const metrics = await (await fetch(`${dashboardUrl}/metrics`)).text();
    expect(metrics).toContain('queue_jobs{queue="actions",state="failed"} 0');
  });

  it('every process stops on SIGTERM and exits 0', async () => {
    expect(await Promise.all(runs.map((run) => run.stop('SIGTERM')))).toEqual([0, 0, 0, 0]);
  });
});
