// The system against a real three-master Redis Cluster (redis-server processes in cluster mode on
// loopback) with twelve queue partitions (docs/operations.md → Partitions): one ingress, two
// workers, the recorder and the dashboard with REDIS_CLUSTER=true. Every event posted is processed
// once; repeats get the first ack; each master carries a share of the work; search, the ledger,
// `npm run send --wait` and the dashboard read every partition; everything stops cleanly.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { OutcomeStore } from '@pw/shared/outcomes';
import { Partitions } from '@pw/shared/queue';
import { createRedis, duplicateRedis } from '@pw/shared/runtime';
import type { Acknowledgement, EventKind } from '@pw/shared/events';
import type { RedisClient } from '@pw/shared/runtime';
import type { Sandbox } from '@pw/sandbox';
import { ChildRun, freePort, signedEvent, TEST_SECRET, testSchema } from '@pw/test-utils';
import type { MasterStats, PrivateRedisCluster, TestSchema } from '@pw/test-utils';
import { clusterEnv, startClusterWithSandbox } from './cluster-system.js';
import { withSchema } from './system.js';

const EVENTS = 120;
const PARTITIONS = 12;
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
let schema: TestSchema | undefined;
let statsBefore: MasterStats[] = [];
// What the first test acknowledged, and when it began.
let acks: Acknowledgement[] = [];
let from = '';
const runs: ChildRun[] = [];
const clients: RedisClient[] = [];
let ingressUrl = '';
let dashboardUrl = '';
let common: Record<string, string> = {};
const operator = { user: 'operator', password: 'cluster-test-password' };
const workerPorts: number[] = [];
// A prefix of the test's own, in braces: the shared keys' hash tag; each partition has its own.
const prefix = `{pwtest-${randomBytes(6).toString('hex')}}`;
const partitions = new Partitions(prefix, PARTITIONS);

beforeAll(async () => {
  const started = await startClusterWithSandbox(3);
  ({ cluster, sandbox } = started);
  schema = await testSchema();
  common = {
    // The seed named first does not hold the shared keys' slot: the apps must follow redirections.
    ...clusterEnv(await cluster.urlWithOwnerLast(`${prefix}:partitions`), prefix, PARTITIONS),
    DATABASE_URL: withSchema(schema),
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
        ...started.sandbox.env,
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
  runs.push(
    ChildRun.tsx('apps/recorder/src/main.ts', {
      ...common,
      RECORDER_HEALTH_PORT: String(await freePort()),
    }),
  );
  await Promise.all([
    runs[0]!.printed('ingress listening'),
    runs[1]!.printed('worker running'),
    runs[2]!.printed('worker running'),
    runs[3]!.printed('dashboard listening'),
    runs[4]!.printed('recorder running'),
  ]);
  // Ready once its cluster client is: a request before that would be answered 503.
  await runs[0]!.answers(`${ingressUrl}/readyz`);
  statsBefore = await cluster.masterStats();
});

afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  for (const client of clients) client.disconnect();
  await sandbox?.stop();
  await cluster?.destroy();
  await schema?.drop();
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

/**
 * Every outcome record completes, each action tried once, read on a cluster client in the
 * partition the webhook's id names.
 */
async function expectEachCompletedOnce(acks: Acknowledgement[]): Promise<void> {
  const redis = createRedis(common.REDIS_URL!, true, { maxRetriesPerRequest: 1 });
  const subscriber = duplicateRedis(redis);
  clients.push(redis, subscriber);
  const stores = partitions.prefixes.map(
    (queuePrefix) => new OutcomeStore(redis, { queuePrefix, recordTtlSeconds: 600 }),
  );
  for (const ack of acks) {
    const outcomes = stores[partitions.ofWebhookId(ack.webhook_id)]!;
    const outcome = await outcomes.waitUntilFinished(ack.webhook_id, subscriber, {
      timeoutMs: 30_000,
    });
    expect(outcome.state).toBe('completed');
    expect(outcome.actions.map((action) => action.name)).toEqual(ack.actions_triggered);
    expect(outcome.actions.every((action) => action.attempts === 1)).toBe(true);
  }
}

/** The dashboard's JSON answer at `path` (the operator's credentials). */
async function dashboard<T>(path: string): Promise<{ status: number; body: T }> {
  const auth = `Basic ${Buffer.from(`${operator.user}:${operator.password}`).toString('base64')}`;
  const response = await fetch(`${dashboardUrl}${path}`, { headers: { authorization: auth } });
  return { status: response.status, body: (await response.json()) as T };
}

/** Each master's share of the commands run since the system started. */
async function commandShares(): Promise<number[]> {
  const after = await cluster!.masterStats();
  const grown = after.map(
    (stats) => stats.calls - (statsBefore.find((b) => b.port === stats.port)?.calls ?? 0),
  );
  const total = grown.reduce((a, b) => a + b, 0);
  return grown.map((calls) => calls / total);
}

interface Ledger {
  accepted: number;
  duplicates: number;
  completed: number;
  in_flight: number;
  balanced: boolean;
}

/**
 * The ledger of the test's minutes once nothing is in flight and the store has every webhook and
 * every count (the ingress's counts of repeats reach it a moment after the webhooks).
 */
async function settledLedger(from: string, accepted: number, duplicates: number): Promise<Ledger> {
  const to = new Date(Date.now() + 60_000).toISOString();
  const path = `/api/ledger?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  for (;;) {
    const { status, body } = await dashboard<Ledger>(path);
    const settled =
      body.accepted >= accepted && body.duplicates >= duplicates && body.balanced === true;
    if (status === 200 && settled && body.in_flight === 0) return body;
    // The recorder writes in batches a moment after Redis: ask again shortly.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('against a three-master Redis Cluster with twelve partitions', { timeout: 90_000 }, () => {
  it('processes every event once, with two workers and one ingress; repeats get the first ack', async () => {
    from = new Date().toISOString();
    const events = Array.from({ length: EVENTS }, (_, index) => {
      const kind = KINDS[index % KINDS.length]!;
      return { kind, body: JSON.stringify(signedEvent(kind, { status: STATUS[kind] })) };
    });
    const answers = await Promise.all(events.map((event) => post(event.kind, event.body)));
    expect(answers.map((answer) => answer.status)).toEqual(events.map(() => 200));
    acks = answers.map((answer) => acknowledgementSchema.parse(answer.body));
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
  });

  it('spreads the work over every partition and master, and both workers take part', async () => {
    // Both workers took part, and together made every call.
    const perWorker = await Promise.all(workerPorts.map(completedActions));
    expect(perWorker.every((count) => count > 0)).toBe(true);
    expect(perWorker.reduce((a, b) => a + b, 0)).toBe((EVENTS / 3) * (3 + 4 + 3));

    // The webhooks went to every partition, and every master carried a share of the work.
    expect(new Set(acks.map((ack) => partitions.ofWebhookId(ack.webhook_id))).size).toBe(
      PARTITIONS,
    );
    const shares = await commandShares();
    expect(shares).toHaveLength(3);
    for (const share of shares) expect(share).toBeGreaterThanOrEqual(0.15);
  });

  it('search and the ledger cover every partition', async () => {
    const ledger = await settledLedger(from, EVENTS, REPEATS);
    expect(ledger).toMatchObject({ accepted: EVENTS, duplicates: REPEATS, completed: EVENTS });
    expect(ledger.balanced).toBe(true);
    const search = await dashboard<{ webhooks: { webhook_id: string }[] }>(
      `/api/webhooks?from=${encodeURIComponent(from)}&limit=500`,
    );
    expect(search.body.webhooks.map((webhook) => webhook.webhook_id).sort()).toEqual(
      acks.map((ack) => ack.webhook_id).sort(),
    );
  });
});

describe('operators and senders of the partitioned cluster', { timeout: 90_000 }, () => {
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
    // The dashboard's answer adds each action's attempt history, the trace id and the problems,
    // known only to the record store: read once the recorder has written every attempt.
    let answer: { actions: { history: { outcome: string }[] }[] };
    for (;;) {
      const response = await fetch(`${dashboardUrl}/api/webhooks/${String(ack?.webhook_id)}`, {
        headers: { authorization: auth },
      });
      expect(response.status).toBe(200);
      answer = (await response.json()) as typeof answer;
      if (answer.actions.every((action) => action.history.length > 0)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(answer.actions.map((action) => action.history.map((h) => h.outcome))).toEqual(
      answer.actions.map(() => ['completed']),
    );
    expect({
      ...answer,
      actions: answer.actions.map(({ history: _history, ...action }) => action),
    }).toMatchObject({ ...outcome, trace_id: null, problems: null });
    // The dashboard's queue figures are read every 5 s, not on each request.
    const scrape = async () => (await fetch(`${dashboardUrl}/metrics`)).text();
    await expect
      .poll(scrape, { timeout: 15_000 })
      .toContain('queue_jobs{queue="actions",state="completed"} 404');
    expect(await scrape()).toContain('queue_jobs{queue="actions",state="failed"} 0');
  });

  it('every process stops on SIGTERM and exits 0', async () => {
    expect(await Promise.all(runs.map((run) => run.stop('SIGTERM')))).toEqual([0, 0, 0, 0, 0]);
  });
});
