// `npm run send`: sign and post sample events, print each answer as one JSON line (and, on
// stderr, each event's entity and customer id, to search for in the console); with --wait,
// then each webhook's outcome record once all its actions have finished (and, on stderr, a line
// for each action held meanwhile because its partner target's circuit is open).
import { runSend } from './run-send.js';

process.exit(await runSend(process.argv.slice(2), process.env, process));
