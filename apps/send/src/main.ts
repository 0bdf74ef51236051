// `npm run send`: sign and post sample events, print each acknowledgement as one JSON line.
import { ConfigError } from '@pw/shared';
import { loadSendConfig } from './config.js';
import { parseSendArgs, sendEvents } from './send.js';

async function main(): Promise<number> {
  const config = loadSendConfig(process.env);
  const options = parseSendArgs(process.argv.slice(2), `http://127.0.0.1:${config.ingressPort}`);
  if (options.wait) {
    throw new Error('--wait needs the worker and its outcome records, which are not built yet');
  }
  const results = await sendEvents(options, config.webhookSecrets[0]);
  for (const result of results) process.stdout.write(`${JSON.stringify(result.body)}\n`);
  return results.every((result) => result.status === 200) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const cause =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const message =
      error instanceof ConfigError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`send: ${message}${cause}\n`);
    process.exit(2);
  },
);
