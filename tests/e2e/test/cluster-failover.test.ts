// A master of the Redis Cluster dies while webhooks arrive (docs/operations.md → Failover): three
// masters with a replica each, twelve partitions, the ingress with REDIS_WAIT_REPLICAS=1. Its
// replica takes over; its partitions answer 503 until a replica holds their writes again (the dead
// node, restarted, rejoins as one), the others go on. Then the system accepts at the first try;
// every acknowledged webhook is processed (none is lost: each was on a replica before its ack),
// and each (webhook, action) has one partner effect: a call repeated with the same
// Idempotency-Key after the failover is a redelivery, counted apart.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared/events';
import { OutcomeStore } from '@pw/shared/outcomes';
import { actionJobId, Partitions, QUEUE_NAMES } from '@pw/shared/queue';
import { createRedis, duplicateRedis } from '@pw/shared/runtime';
import type { Acknowledgement } from '@pw/shared/events';
import type { RedisClient } from '@pw/shared/runtime';
import type { Sandbox } from '@pw/sandbox';
import { ChildRun, freePort, signedEvent, TEST_SECRET } from '@pw/test-utils';
import type { PrivateRedisCluster } from '@pw/test-utils';
import { clusterEnv, startClusterWithSandbox } from './cluster-system.js';

const PARTITIONS = 12;
const prefix = `{pwtest-${randomBytes(6).toString('hex')}}`;
const partitions = new Partitions(prefix, PARTITIONS);

let cluster: PrivateRedisCluster | undefined;
let sandbox: Sandbox | undefined;
const runs: ChildRun[] = [];
const clients: RedisClient[] = [];
let ingressUrl = '';
let redisUrl = '';

beforeAll(async () => {
  const started = await startClusterWithSandbox(3, { replicas: 1, nodeTimeoutMs: 1000 });
  ({ cluster, sandbox } = started);
  redisUrl = cluster.url;
  const common = clusterEnv(redisUrl, prefix, PARTITIONS);
  const ingressPort = await freePort();
  ingressUrl = `http://127.0.0.1:${ingressPort}`;
  runs.push(
    ChildRun.tsx('apps/ingress/src/main.ts', {
      ...common,
      INGRESS_PORT: String(ingressPort),
      WEBHOOK_SECRETS: TEST_SECRET,
      REDIS_WAIT_REPLICAS: '1',
    }),
    ChildRun.tsx('apps/worker/src/main.ts', {
      ...common,
      ...started.sandbox.env,
      WORKER_HEALTH_PORT: String(await freePort()),
      // A job whose worker lost its master mid-call is taken over within seconds.
      WORKER_LOCK_MS: '5000',
    }),
  );
  await Promise.all([runs[0]!.printed('ingress listening'), runs[1]!.printed('worker running')]);
  // Ready once its cluster client is: a request before that would be answered 503.
  await runs[0]!.answers(`${ingressUrl}/readyz`);
});

afterAll(async () => {
  await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  for (const client of clients) client.disconnect();
  await sandbox?.stop();
  await cluster?.destroy();
});

/** Posts `body` as a sender does: again after a 503, until acknowledged. Returns the tries made. */
async function deliver(body: string): Promise<{ ack: Acknowledgement; tries: number }> {
  for (let tries = 1; ; tries++) {
    const response = await fetch(`${ingressUrl}/webhooks/quote-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    if (response?.status === 200) {
      return { ack: acknowledgementSchema.parse(await response.json()), tries };
    }
    if (response && response.status !== 503) throw new Error(`answered ${response.status}`);
    if (tries === 100) throw new Error('not acknowledged after 100 tries');
    // A sender's back-off before it tries again.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Delivers `count` new events, four at a time; calls `after(n)` once n are acknowledged. */
async function deliverMany(count: number, after?: { at: number; run: () => void }) {
  const results: { ack: Acknowledgement; tries: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        next += 1;
        const body = JSON.stringify(signedEvent('quote', { status: 'approved' }));
        results.push(await deliver(body));
        if (results.length === after?.at) after.run();
      }
    }),
  );
  return results;
}

/** What BullMQ holds of a webhook not finished in time, and the worker's last words: for a failure. */
async function stuck(redis: RedisClient, ack: Acknowledgement): Promise<string> {
  const queue = `${partitions.prefix(partitions.ofWebhookId(ack.webhook_id))}:${QUEUE_NAMES.actions}`;
  const jobs = await Promise.all(
    ack.actions_triggered.map(async (action) => {
      const id = actionJobId(ack.webhook_id, action);
      const [fields, waiting, active] = await Promise.all([
        redis.hmget(`${queue}:${id}`, 'processedOn', 'finishedOn', 'attemptsMade', 'failedReason'),
        redis.lpos(`${queue}:wait`, id),
        redis.lpos(`${queue}:active`, id),
      ]);
      return { id, fields, wait_position: waiting, active_position: active };
    }),
  ).catch((error: unknown) => `jobs unreadable: ${String(error)}`);
  const lists = await Promise.all([
    redis.llen(`${queue}:wait`),
    redis.lrange(`${queue}:active`, 0, -1),
  ]).catch((error: unknown) => String(error));
  const [slot, nodes] = await Promise.all([
    redis.cluster('KEYSLOT', `${queue}:wait`).catch(String),
    clusterClients(),
  ]);
  // The worker's warnings and errors (a lost connection, a BullMQ worker's error), then its last words.
  const output = runs[1]!.output;
  const warnings = output.split('\n').filter((line) => /"level":"(warn|error|fatal)"/.test(line));
  return (
    `jobs of ${queue} (slot ${slot}): ${JSON.stringify(jobs)}\n` +
    `its wait length and active list: ${JSON.stringify(lists)}\n${nodes}\n` +
    `worker warnings:\n${warnings.slice(0, 40).join('\n')}\n` +
    `worker output:\n${output.slice(-3000)}`
  );
}

/** Each node's view of the cluster and the worker's connections to it: where a worker is blocked. */
async function clusterClients(): Promise<string> {
  const views = await Promise.all(
    cluster!.nodes.map(async (node) => {
      const client = node.client();
      client.on('error', () => undefined);
      try {
        const [nodes, clients] = await Promise.all([
          client.cluster('NODES') as Promise<string>,
          client.client('LIST') as Promise<string>,
        ]);
        const myself = nodes.split('\n').find((line) => line.includes('myself')) ?? '';
        const worker = clients.split('\n').filter((line) => /pw-worker|bzpopmin/.test(line));
        return `node ${node.port}: ${myself}\n  ${worker.join('\n  ')}`;
      } catch (error) {
        return `node ${node.port}: ${String(error)}`;
      } finally {
        client.disconnect();
      }
    }),
  );
  return views.join('\n');
}

describe('a master dies while webhooks arrive', { timeout: 120_000 }, () => {
  it('accepts again once its replica is promoted, and loses or repeats no acknowledged webhook', async () => {
    const masters = await cluster!.masters();
    let failedOver: Promise<void> | undefined;
    const during = await deliverMany(60, {
      at: 20,
      run: () => {
        failedOver = cluster!.killMaster(masters[0]!).then(() => cluster!.restart(masters[0]!));
      },
    });
    await failedOver;
    // Once the replica has taken over and has a replica of its own, every webhook is acknowledged
    // at the first try.
    const after = await deliverMany(12);
    expect(after.map((result) => result.tries)).toEqual(after.map(() => 1));

    const acks = [...during, ...after].map((result) => result.ack);
    const redis = createRedis(redisUrl.replace(`127.0.0.1:${masters[0]},`, ''), true, {
      maxRetriesPerRequest: 3,
    });
    const subscriber = duplicateRedis(redis);
    clients.push(redis, subscriber);
    const stores = partitions.prefixes.map(
      (queuePrefix) => new OutcomeStore(redis, { queuePrefix, recordTtlSeconds: 600 }),
    );
    for (const ack of acks) {
      const outcome = await stores[partitions.ofWebhookId(ack.webhook_id)]!.waitUntilFinished(
        ack.webhook_id,
        subscriber,
        { timeoutMs: 60_000 },
      ).catch(async (error: unknown) => {
        throw new Error(`${String(error)}\n${await stuck(redis, ack)}`);
      });
      expect(outcome.state).toBe('completed');
    }
    // One effect per (webhook, action): every expected key called, nothing else.
    const expected = acks.flatMap((ack) =>
      ack.actions_triggered.map((action) => `${ack.webhook_id}:${action}`),
    );
    const called = new Set(sandbox!.api.calls.map((call) => call.headers['idempotency-key']));
    expect([...called].sort()).toEqual([...new Set(expected)].sort());
  });
});
