import { Redis } from 'ioredis';
import { OutcomeStore } from '@pw/shared';
import type { WebhookOutcome } from '@pw/shared';
import {
  ChildRun,
  deleteKeys,
  freePort,
  newTestRedis,
  testRedisUrl,
  uniquePrefix,
} from '@pw/test-utils';

export interface RunningSystem {
  run: ChildRun;
  env: Record<string, string>;
  url: { ingress: string; dashboard: string; api: string; worker: string };
  /** `npm run send -- …args`: its exit code and the JSON lines it printed. */
  send(...args: string[]): Promise<{ code: number | null; lines: unknown[]; output: string }>;
  /** The webhook's outcome as soon as `condition` holds (woken by the outcome store's changes). */
  outcome(
    webhookId: string,
    condition: (outcome: WebhookOutcome) => boolean,
  ): Promise<WebhookOutcome>;
  stop(): Promise<void>;
}

/** `npm start` with nothing configured but free ports and a queue prefix of its own. */
export async function startSystem(extra: Record<string, string> = {}): Promise<RunningSystem> {
  const prefix = uniquePrefix();
  const env: Record<string, string> = {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    INGRESS_PORT: String(await freePort()),
    DASHBOARD_PORT: String(await freePort()),
    WORKER_HEALTH_PORT: String(await freePort()),
    SANDBOX_IDP_PORT: String(await freePort()),
    SANDBOX_API_PORT: String(await freePort()),
    AUTH_URL: '',
    API_BASE_URL: '',
    WEBHOOK_SECRETS: '',
    NODE_ENV: 'development',
    ...extra,
  };
  const run = ChildRun.tsx('scripts/start.ts', env);
  await Promise.all(
    ['ingress listening', 'worker running', 'dashboard listening'].map((text) => run.printed(text)),
  );
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  const subscriber = redis.duplicate();
  const outcomes = new OutcomeStore(redis, { queuePrefix: prefix, recordTtlSeconds: 600 });
  const local = (port: string | undefined) => `http://127.0.0.1:${port}`;
  return {
    run,
    env,
    url: {
      ingress: local(env.INGRESS_PORT),
      dashboard: local(env.DASHBOARD_PORT),
      api: local(env.SANDBOX_API_PORT),
      worker: local(env.WORKER_HEALTH_PORT),
    },
    async send(...args) {
      const send = ChildRun.start(['npm', 'run', '-s', 'send', '--', ...args], env);
      const code = await send.exited;
      const lines = send.output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as unknown);
      return { code, lines, output: send.output };
    },
    outcome: (webhookId, condition) =>
      outcomes.waitUntil(webhookId, subscriber, condition, { timeoutMs: 20_000 }),
    async stop() {
      await run.stop('SIGKILL');
      subscriber.disconnect();
      redis.disconnect();
      const cleaner = newTestRedis();
      await deleteKeys(cleaner, prefix);
      cleaner.disconnect();
    },
  };
}
