// The reaper (reaper.ts starts it): kills the process groups a test process started once that
// process is gone. Plain JavaScript, run by `node` itself: no tsx start-up for each test process.
//
// Its standard input is a pipe whose only writer is the test process: a line "pgid" remembers a
// group, "-pgid" forgets it. The pipe ends when the test process exits or dies in any way, even
// by SIGKILL, which no handler of its own could see; that end is the reaper's only cue.
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';

/** How long the groups get to exit on SIGTERM (the apps close their connections) before SIGKILL. */
const GRACE_MS = 2_000;

const groups = new Set();
let partial = '';

/** Sends `signal` to process group `pgid`; false when nothing of it is left (or not ours). */
function signal(pgid, name) {
  try {
    process.kill(-pgid, name);
    return true;
  } catch {
    return false;
  }
}

let reaping = false;
async function reap() {
  if (reaping) return;
  reaping = true;
  let alive = [...groups].filter((pgid) => signal(pgid, 'SIGTERM'));
  const deadline = Date.now() + GRACE_MS;
  while (alive.length > 0 && Date.now() < deadline) {
    await delay(50);
    alive = alive.filter((pgid) => signal(pgid, 0));
  }
  for (const pgid of alive) signal(pgid, 'SIGKILL');
  process.exit(0);
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop() ?? '';
  for (const line of lines) {
    const pgid = Number(line);
    if (!Number.isInteger(pgid) || pgid === 0) continue;
    if (pgid > 0) groups.add(pgid);
    else groups.delete(-pgid);
  }
});
// 'error' too: a reset pipe means the writer is gone just as well.
process.stdin.on('end', () => void reap());
process.stdin.on('error', () => void reap());
