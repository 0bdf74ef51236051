import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const reaperEntry = fileURLToPath(new URL('./reaper-process.mjs', import.meta.url));

/** This process's reaper's standard input, once a child was registered; see reaper-process.mjs. */
let reaperInput: Socket | undefined;

/**
 * Starts this process's reaper on first use. A child's own `exit` handler or an `afterAll` never
 * runs when the test process dies (turbo aborting the run, a vitest worker killed with SIGKILL):
 * only another process can clean up then, and one that outlives this one.
 */
function reaper(): Socket {
  if (reaperInput) return reaperInput;
  const child = spawn(process.execPath, [reaperEntry], {
    // Its own process group and session: a terminal's Ctrl-C or turbo's signal to the test run's
    // group must not take it down with the run it is to clean up after.
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    // Nothing of the test's environment is of use to it (NODE_OPTIONS' loaders, an --inspect
    // port), nor its folder, which a test may delete.
    env: {},
    cwd: '/',
  });
  const input = child.stdin as Socket;
  // Never keeps the test process alive: its exit is what tells the reaper to act.
  child.unref();
  input.unref();
  // The reaper killed by someone: its groups are then left to their owners' stop(), as before.
  input.on('error', () => undefined);
  reaperInput = input;
  return input;
}

/**
 * Kills process group `pgid` (a child started with `detached: true`, whose pid is its group's id)
 * when this process ends, however it ends: SIGTERM to the group, SIGKILL to what is left 2 s on.
 * So no app, Redis or grandchild of a test outlives the test run that started it.
 */
export function reapWithTestRun(pgid: number): void {
  reaper().write(`${pgid}\n`);
}

/**
 * As reapWithTestRun, for one process `pid` that is not its group's leader (an embedded
 * PostgreSQL's postmaster, which its package starts in the test process's own group).
 */
export function reapProcessWithTestRun(pid: number): void {
  reaper().write(`pid ${pid}\n`);
}

/**
 * Tells the reaper to forget group `pgid` if nothing is left in it (its processes were stopped),
 * so that a later, unrelated group given the same id (ids wrap at 32768 on some machines) is not
 * killed at the end of the run. A group with processes left stays remembered.
 */
export function forgetReaped(pgid: number): void {
  forgetWhenGone(-pgid, `-${pgid}`);
}

/** As forgetReaped, for a process given to reapProcessWithTestRun. */
export function forgetReapedProcess(pid: number): void {
  forgetWhenGone(pid, `-pid ${pid}`);
}

function forgetWhenGone(target: number, line: string): void {
  if (!reaperInput) return;
  try {
    // Signal 0 only asks whether the process, or any process of the group, is still there.
    process.kill(target, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') reaperInput.write(`${line}\n`);
  }
}
