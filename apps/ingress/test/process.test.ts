import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementSchema, QUEUE_NAMES } from '@pw/shared';
import type { WebhookJobData } from '@pw/shared';
import {
  deleteKeys,
  freePort,
  newTestRedis,
  testRedisUrl,
  TEST_SECRET,
  uniquePrefix,
} from '@pw/test-utils';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;
const prefix = uniquePrefix();

function run(args: string[], env: Record<string, string>) {
  return spawn(args[0]!, args.slice(1), { cwd: root, env: { ...process.env, ...env } });
}

async function finished(child: ChildProcessWithoutNullStreams) {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** Collects the process's output; `printed(text)` resolves once `text` has appeared. */
function capture(child: ChildProcessWithoutNullStreams) {
  let output = '';
  const waiting: { text: string; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wait of waiting.filter((w) => output.includes(w.text))) wait.resolve();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return {
    get output() {
      return output;
    },
    printed(text: string) {
      if (output.includes(text)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        waiting.push({ text, resolve });
        child.once('exit', () => reject(new Error(`exited without printing ${text}:\n${output}`)));
      });
    },
  };
}

describe('the ingress process, as `npm start` runs it', () => {
  let port: number;
  let ingress: ChildProcessWithoutNullStreams;
  let logs: ReturnType<typeof capture>;
  const env = () => ({
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    INGRESS_PORT: String(port),
    WEBHOOK_SECRETS: `${TEST_SECRET},older-secret`,
    LOG_LEVEL: 'info',
  });

  beforeAll(async () => {
    port = await freePort();
    ingress = run([tsx, 'apps/ingress/src/main.ts'], env());
    logs = capture(ingress);
    await logs.printed('ingress listening');
  });
  afterAll(async () => {
    if (ingress.exitCode === null) ingress.kill('SIGKILL');
    const redis = newTestRedis();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('`npm run send -- quote --status approved --count 2` prints two acks, enqueued in Redis', async () => {
    const send = run(
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
    const { code, stdout, stderr } = await finished(send);
    expect(stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(code).toBe(0);
    const acks = stdout
      .trim()
      .split('\n')
      .map((line) => acknowledgementSchema.parse(JSON.parse(line)));
    expect(acks).toHaveLength(2);
    expect(acks[0]!.actions_triggered).toEqual([
      'notify_customer',
      'update_sales_opportunity',
      'lock_price',
    ]);
    expect(acks[0]!.webhook_id).not.toBe(acks[1]!.webhook_id);
    const queue = new Queue<WebhookJobData>(QUEUE_NAMES.webhooks, {
      connection: { url: testRedisUrl() },
      prefix,
    });
    for (const ack of acks)
      expect((await queue.getJob(ack.webhook_id))?.data.webhook_id).toBe(ack.webhook_id);
    await queue.close();
  });

  it('logs each acceptance, and no secret and no signature', async () => {
    await logs.printed('webhook accepted');
    expect(logs.output).not.toContain(TEST_SECRET);
    expect(logs.output).not.toContain('older-secret');
    expect(logs.output).not.toMatch(/sha256=[0-9a-f]{64}/);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const exited = once(ingress, 'exit');
    ingress.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

  it('refuses to start in production without WEBHOOK_SECRETS, listing every problem', async () => {
    const bad = run([tsx, 'apps/ingress/src/main.ts'], {
      ...env(),
      NODE_ENV: 'production',
      WEBHOOK_SECRETS: '',
      INGRESS_PORT: 'eighty',
    });
    const { code, stderr } = await finished(bad);
    expect(code).toBe(1);
    expect(stderr).toContain('WEBHOOK_SECRETS');
    expect(stderr).toContain('INGRESS_PORT');
    expect(stderr.trim().split('\n')[0]).toBe('ingress: Invalid configuration:');
  });
});
