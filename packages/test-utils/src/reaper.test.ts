import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildRun } from './child-process.js';
import { freePort } from './redis-server.js';

const parentEntry = fileURLToPath(new URL('./fixtures/reaped-parent.ts', import.meta.url));

/** True while something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      // A port of the kernel's outgoing range can connect to itself (the socket got `port` as
      // its own): that is nobody listening.
      const itself = socket.localPort === port;
      socket.destroy();
      resolve(!itself);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port in 42000–42999 (the range kept for this test's servers) that nothing listens on now. */
/** A port below the range of outgoing connections, so none of them takes it meanwhile. */
const unusedPort = freePort;

/** True while process `pid` runs; a zombie (dead, its exit status not yet collected) is gone. */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** reaped-parent and the pids it printed; killed after each test, so a failure leaves none. */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ESRCH: reaped, as it should be.
    }
  }
});

type Mode = 'app' | 'redis' | 'postgres';

/** The embedded PostgreSQL's data and socket folders, removed after each test. */
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** Starts reaped-parent (`mode` on `port`), waits until it has started its children, their pids. */
async function startParentOn(mode: Mode, port: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pw-postgres-'));
  folders.push(dataDir);
  const parent = ChildRun.start(
    [process.execPath, '--import', 'tsx', parentEntry, mode, String(port), dataDir],
    {},
    { name: `reaped-parent ${mode}` },
  );
  started.push(parent.pid);
  await parent.printed('ready');
  const socketDir = /^socket (.+)$/m.exec(parent.output)?.[1];
  if (socketDir) folders.push(socketDir);
  const pids = /pids ([\d ]+)/.exec(parent.output)![1]!.trim().split(' ').map(Number);
  started.push(...pids);
  return { parent, pids, port };
}

/**
 * startParentOn a port of its own; again on another, up to 5 times, when a client socket took
 * the port before the server's bind (42000–42999 is within the kernel's outgoing range).
 */
async function startParent(mode: Mode) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startParentOn(mode, await unusedPort());
    } catch (error) {
      const taken = /EADDRINUSE|Address already in use/.test(String(error));
      if (!taken || attempt >= 5) throw error;
    }
  }
}

/** SIGKILLs the parent, as turbo's abort or a killed vitest worker does; then waits for the reaper. */
async function expectReapedAfterKill(parent: ChildRun, pids: number[], port: number) {
  expect(await listening(port)).toBe(true);
  expect(pids.every(running)).toBe(true);
  // The parent alone, as when a vitest worker is killed: not its group (ChildRun.stop's SIGKILL
  // would reach an embedded PostgreSQL there too).
  process.kill(parent.pid, 'SIGKILL');
  await parent.exited;
  // The reaper's SIGTERM, then its SIGKILL 2 s on (the app's grandchild ignores SIGTERM).
  await expect.poll(() => listening(port), { timeout: 10_000, interval: 100 }).toBe(false);
  await expect.poll(() => pids.filter(running), { timeout: 10_000, interval: 100 }).toEqual([]);
}

describe('reapWithTestRun', () => {
  it('kills an app a killed test run started through ChildRun, and the grandchild in its group', async () => {
    const { parent, pids, port } = await startParent('app');
    expect(pids).toHaveLength(2);
    await expectReapedAfterKill(parent, pids, port);
  });

  it('kills a PrivateRedis a killed test run started', async () => {
    const { parent, pids, port } = await startParent('redis');
    expect(pids).toHaveLength(1);
    await expectReapedAfterKill(parent, pids, port);
  });

  it(
    "kills an embedded PostgreSQL a killed test run started, though it is in the run's own group",
    { timeout: 60_000 },
    async () => {
      const { parent, pids, port } = await startParent('postgres');
      expect(pids).toHaveLength(1);
      await expectReapedAfterKill(parent, pids, port);
    },
  );
});
