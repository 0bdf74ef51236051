// The reaper (reaper.ts starts it): kills the process groups a test process started once that
// process is gone. Plain JavaScript, run by `node` itself: no tsx start-up for each test process.
//
// Its standard input is a pipe whose only writer is the test process: a line "pgid" remembers a
// group, "-pgid" forgets it; "pid N" remembers one process that is not its group's leader (an
// embedded PostgreSQL's postmaster), "-pid N" forgets it. The pipe ends when the test process
// exits or dies in any way, even by SIGKILL, which no handler of its own could see; that end is
// the reaper's only cue.
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';

/** How long the groups get to exit on SIGTERM (the apps close their connections) before SIGKILL. */
const GRACE_MS = 2_000;

/** What to kill, as `process.kill` takes it: -pgid for a group, the pid for one process. */
const targets = new Set();
let partial = '';

/** Sends `signal` to `target`; false when nothing of it is left (or not ours). */
function signal(target, name) {
  try {
    process.kill(target, name);
    return true;
  } catch {
    return false;
  }
}

let reaping = false;
async function reap() {
  if (reaping) return;
  reaping = true;
  let alive = [...targets].filter((target) => signal(target, 'SIGTERM'));
  const deadline = Date.now() + GRACE_MS;
  while (alive.length > 0 && Date.now() < deadline) {
    await delay(50);
    alive = alive.filter((target) => signal(target, 0));
  }
  for (const target of alive) signal(target, 'SIGKILL');
  process.exit(0);
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop() ?? '';
  for (const line of lines) {
    const [, forget, pid, id] = /^(-?)(pid )?(\d+)$/.exec(line) ?? [];
    const number = Number(id);
    if (!Number.isInteger(number) || number <= 0) continue;
    const target = pid ? number : -number;
    if (forget) targets.delete(target);
    else targets.add(target);
  }
});
// 'error' too: a reset pipe means the writer is gone just as well.
process.stdin.on('end', () => void reap());
process.stdin.on('error', () => void reap());
