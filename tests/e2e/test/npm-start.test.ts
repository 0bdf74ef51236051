// The README's first run, as a newcomer does it: `npm start`, then `npm run send -- … --wait`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema } from '@pw/shared';
import type { WebhookOutcome } from '@pw/shared';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';

const prefix = uniquePrefix();
let env: Record<string, string>;
let system: ChildRun;

beforeAll(async () => {
  env = {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    INGRESS_PORT: String(await freePort()),
    WORKER_HEALTH_PORT: String(await freePort()),
    SANDBOX_IDP_PORT: String(await freePort()),
    SANDBOX_API_PORT: String(await freePort()),
    AUTH_URL: '',
    API_BASE_URL: '',
    WEBHOOK_SECRETS: '',
    NODE_ENV: 'development',
  };
  system = ChildRun.tsx('scripts/start.ts', env);
  await Promise.all([system.printed('ingress listening'), system.printed('worker running')]);
});
afterAll(async () => {
  await system.stop('SIGKILL');
  const redis = newTestRedis();
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('npm start with nothing configured', () => {
  it('says it uses the sandbox for the identity provider and the partner API', () => {
    expect(system.output).toContain('AUTH_URL is unset: using the sandbox identity provider');
    expect(system.output).toContain('API_BASE_URL is unset: using the sandbox partner API');
  });

  it('`npm run send -- quote --status approved --wait`: an ack, then all three actions completed', async () => {
    const send = ChildRun.start(
      ['npm', 'run', '-s', 'send', '--', 'quote', '--status', 'approved', '--wait'],
      env,
    );
    expect(await send.exited).toBe(0);
    const [ackLine, outcomeLine] = send.output.split('\n').filter((line) => line.startsWith('{'));
    const ack = acknowledgementSchema.parse(JSON.parse(ackLine!));
    const outcome = JSON.parse(outcomeLine!) as WebhookOutcome;
    expect(outcome.webhook_id).toBe(ack.webhook_id);
    expect(outcome.state).toBe('completed');
    expect(outcome.actions.map((action) => [action.name, action.state])).toEqual([
      ['notify_customer', 'completed'],
      ['update_sales_opportunity', 'completed'],
      ['lock_price', 'completed'],
    ]);
    const calls = (await (
      await fetch(`http://127.0.0.1:${env.SANDBOX_API_PORT}/__sandbox/calls`)
    ).json()) as {
      headers: Record<string, string>;
    }[];
    const keys = calls
      .map((call) => call.headers['idempotency-key'])
      .filter((key) => key?.startsWith(ack.webhook_id));
    expect(keys.sort()).toEqual(
      ack.actions_triggered.map((action) => `${ack.webhook_id}:${action}`).sort(),
    );
  });

  it('Ctrl-C stops everything with exit code 0, and no secret was logged', async () => {
    expect(await system.stop('SIGINT')).toBe(0);
    expect(system.output).toContain('stopped');
    expect(system.output).not.toContain('sandbox-secret');
    expect(system.output).not.toContain('dev-secret');
  });
});
