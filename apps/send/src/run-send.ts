// `npm run send` from its arguments and environment, writing to the streams it is given: the
// command's main runs it on the process's own, the end-to-end tests on streams they read.
import type { Writable } from 'node:stream';
import { Partitions } from '@pw/shared/queue';
import { createRedis, duplicateRedis } from '@pw/shared/runtime';
import { awaitOutcomes } from './await-outcomes.js';
import { loadSendConfig } from './config.js';
import type { SendConfig } from './config.js';
import { parseSendArgs, reportingHeld, sendEvents, sendSucceeded } from './send.js';
import type { SendResult } from './send.js';

export interface SendStreams {
  stdout: Writable;
  stderr: Writable;
}

/** Signs and posts the events `args` ask for, prints the answers; resolves to the exit code. */
export async function runSend(
  args: string[],
  env: Record<string, string | undefined>,
  streams: SendStreams,
): Promise<number> {
  try {
    return await send(args, env, streams);
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const message = error instanceof Error ? error.message : String(error);
    streams.stderr.write(`send: ${message}${cause}\n`);
    return 2;
  }
}

async function send(
  args: string[],
  env: Record<string, string | undefined>,
  { stdout, stderr }: SendStreams,
): Promise<number> {
  const config = loadSendConfig(env);
  const options = parseSendArgs(args, `http://127.0.0.1:${config.INGRESS_PORT}`);
  const results = await sendEvents(options, config.webhookSecrets[0]);
  for (const result of results) {
    stdout.write(`${JSON.stringify(result.body)}\n`);
    // On stderr, so that stdout stays one JSON answer per line for scripts.
    stderr.write(
      `sent ${options.kind} ${result.entityId} (customer ${result.customerId}): ${result.status}\n`,
    );
  }
  if (options.wait)
    await printOutcomes(results, config, options.timeoutSeconds, { stdout, stderr });
  return results.every((result) => sendSucceeded(result, options)) ? 0 : 1;
}

async function printOutcomes(
  results: SendResult[],
  config: SendConfig,
  timeoutSeconds: number,
  { stdout, stderr }: SendStreams,
) {
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, { maxRetriesPerRequest: 1 });
  const subscriber = duplicateRedis(redis);
  try {
    const outcomes = awaitOutcomes(
      results.map((result) => result.body),
      {
        redis,
        subscriber,
        partitions: new Partitions(config.QUEUE_PREFIX, config.QUEUE_PARTITIONS),
        condition: reportingHeld(stderr),
        timeoutMs: timeoutSeconds * 1000,
      },
    );
    for await (const outcome of outcomes) stdout.write(`${JSON.stringify(outcome)}\n`);
  } finally {
    subscriber.disconnect();
    redis.disconnect();
  }
}
