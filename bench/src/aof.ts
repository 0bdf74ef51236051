// `npm run bench:aof` (docs/reliability-and-security.md): what Redis's append-only file costs,
// with `appendfsync everysec` and with `always`, the bench's AOF phase alone: raw BullMQ enqueues
// and one built ingress process on three private Redis servers that differ only in it.
import { BenchRun } from './bench-run.js';
import { readOptions } from './options.js';
import { aofPhase } from './phases/aof.js';
import { buildApps } from './processes.js';

const options = readOptions();
const bench = new BenchRun(options);
bench.cleanUpOnSignals();

await bench.runToEnd(async () => {
  buildApps(bench);
  const { ingress_cost_vs_main_run_pct: _noMainRun, ...figures } = await aofPhase(bench, 0);
  console.log(JSON.stringify(figures, null, 2));
});
