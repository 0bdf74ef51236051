// `npm run send`: sign and post sample events, print each answer as one JSON line (and, on
// stderr, each event's entity and customer id, to search for in the console); with --wait,
// then each webhook's outcome record once all its actions have finished (and, on stderr, a line
// for each action held meanwhile because its partner target's circuit is open).
import { Partitions } from '@pw/shared/queue';
import { createRedis, duplicateRedis } from '@pw/shared/runtime';
import { awaitOutcomes } from './await-outcomes.js';
import { loadSendConfig } from './config.js';
import type { SendConfig } from './config.js';
import { parseSendArgs, reportingHeld, sendEvents, sendSucceeded } from './send.js';
import type { SendResult } from './send.js';

async function printOutcomes(results: SendResult[], config: SendConfig, timeoutSeconds: number) {
  const redis = createRedis(config.REDIS_URL, config.REDIS_CLUSTER, { maxRetriesPerRequest: 1 });
  const subscriber = duplicateRedis(redis);
  try {
    const outcomes = awaitOutcomes(
      results.map((result) => result.body),
      {
        redis,
        subscriber,
        partitions: new Partitions(config.QUEUE_PREFIX, config.QUEUE_PARTITIONS),
        condition: reportingHeld(process.stderr),
        timeoutMs: timeoutSeconds * 1000,
      },
    );
    for await (const outcome of outcomes) process.stdout.write(`${JSON.stringify(outcome)}\n`);
  } finally {
    subscriber.disconnect();
    redis.disconnect();
  }
}

async function main(): Promise<number> {
  const config = loadSendConfig(process.env);
  const options = parseSendArgs(process.argv.slice(2), `http://127.0.0.1:${config.INGRESS_PORT}`);
  const results = await sendEvents(options, config.webhookSecrets[0]);
  for (const result of results) {
    process.stdout.write(`${JSON.stringify(result.body)}\n`);
    // On stderr, so that stdout stays one JSON answer per line for scripts.
    process.stderr.write(
      `sent ${options.kind} ${result.entityId} (customer ${result.customerId}): ${result.status}\n`,
    );
  }
  if (options.wait) await printOutcomes(results, config, options.timeoutSeconds);
  return results.every((result) => sendSucceeded(result, options)) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const cause =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`send: ${message}${cause}\n`);
    process.exit(2);
  },
);
