import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { forgetReaped, reapWithTestRun } from './reaper.js';

/**
 * The first port of the range Linux takes outgoing connections' local ports from
 * (`ip_local_port_range`), or 32768 where it cannot be read.
 */
function ephemeralPortsStart(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 20_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** True when a server can listen on `port` on every address now, as our processes do. */
async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port);
  // `once` rejects on 'error' (the port is taken): that is a no, not a failure.
  const listened = await once(server, 'listening').then(
    () => true,
    () => false,
  );
  if (listened) {
    server.close();
    await once(server, 'close');
  }
  return listened;
}

/** The ports this process's `freePort` returned. */
const handedOut = new Set<number>();

/**
 * Where processes running tests at once (turbo runs three suites) claim the ports they hand out:
 * a file per port holding the claiming process's pid. Two processes' `freePort` could otherwise
 * return the same port in the seconds before either listens on it (seen: a test's PostgreSQL
 * refused its port, EADDRINUSE, taken by another suite's server meanwhile).
 */
const PORT_CLAIMS = join(tmpdir(), 'pw-port-claims');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Claims `port` for this process's life; false when a live process claimed it. */
export async function claimAcrossProcesses(port: number): Promise<boolean> {
  await mkdir(PORT_CLAIMS, { recursive: true });
  const file = join(PORT_CLAIMS, String(port));
  for (let tries = 0; tries < 2; tries += 1) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      const holder = Number(await readFile(file, 'utf8').catch(() => ''));
      // Only a claim of a process that has ended is stale, and taken over; one not written yet
      // (no pid) is another process's, this instant.
      if (!(holder > 0) || alive(holder)) return false;
      await rm(file, { force: true });
    }
  }
  return false;
}

/**
 * A TCP port free now, for a process a test starts. It is picked at random below the range the
 * kernel takes outgoing connections' ports from: a port from that range, free when asked, can be
 * taken by any client socket before the process meant to listen on it has started (seen: the
 * dashboard of an `npm start`, ten seconds later, failing with EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralPortsStart() - 1;
  for (let tries = 0; tries < 200; tries += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    // A port handed out before is not checked again: a test asking for several ports before it
    // listens on any (a whole system's) would otherwise be given one twice now and then.
    if (handedOut.has(port)) continue;
    if ((await canListen(port)) && (await claimAcrossProcesses(port))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`freePort: no free port between ${low} and ${high} in 200 tries`);
}

export interface PrivateRedisOptions {
  /** @defaultValue a free port */
  port?: number;
  /** Turn the append-only file on (data survives a restart). @defaultValue false */
  appendOnly?: boolean;
  /** More `redis-server` arguments (`--cluster-enabled yes`, …). */
  args?: readonly string[];
  /** Its data folder, created when missing and kept by destroy(). @defaultValue a new temporary one */
  dir?: string;
  /**
   * Run it in a process group of its own, so that a terminal's Ctrl-C reaches only its starter,
   * which stops it last (npm start). Every server runs so now, since the reaper kills it by its
   * group when its starter dies (reaper.ts); kept for the callers that ask. @defaultValue true
   */
  detached?: boolean;
}

/** True for a start that failed because its port was taken meanwhile. */
export const portTaken = (error: unknown): boolean =>
  error instanceof Error && error.message.includes('Address already in use');

/** A `redis-server` of the test's own on loopback, which the test may stop and start again. */
export class PrivateRedis {
  readonly port: number;
  readonly url: string;
  private child: ChildProcess | undefined;

  private constructor(
    port: number,
    readonly dir: string,
    private readonly options: PrivateRedisOptions,
  ) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
  }

  /**
   * Starts one. A port of its own choosing that another process took between `freePort` and the
   * server's bind (tests start servers side by side) is chosen again, up to 5 times.
   */
  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'pw-redis-')));
    if (options.dir) await mkdir(options.dir, { recursive: true });
    for (let attempt = 1; ; attempt++) {
      const redis = new PrivateRedis(options.port ?? (await freePort()), dir, options);
      try {
        await redis.resume();
        return redis;
      } catch (error) {
        if (options.port !== undefined || attempt >= 5 || !portTaken(error)) throw error;
      }
    }
  }

  /** Starts the server (again, on the same port and data directory) and waits until it answers. */
  async resume(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--dir',
      this.dir,
    ];
    args.push('--appendonly', this.options.appendOnly ? 'yes' : 'no', ...(this.options.args ?? []));
    // Its own process group (a save it forks is in it too), which the reaper kills should this
    // process die without stopping it: no server outlives a test run that was aborted.
    const child = spawn('redis-server', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const { pid } = child;
    if (pid !== undefined) {
      reapWithTestRun(pid);
      child.once('exit', () => forgetReaped(pid));
    }
    this.child = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit').then(() => {
      throw new Error(`redis-server on port ${this.port} exited at start:\n${output}`);
    });
    const ready = (async () => {
      for (;;) {
        if (output.includes('Ready to accept connections')) return;
        await Promise.race([once(child.stdout, 'data'), exited]);
      }
    })();
    await Promise.race([ready, exited]);
  }

  /** Stops the server (SIGTERM) and waits for the process to exit. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** Kills the server (SIGKILL: no shutdown, no last write) and waits for the process to exit. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  private async end(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }

  /** Freezes the server (SIGSTOP): connections stay open, commands wait unanswered. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  /** Lets a frozen server go on (SIGCONT): it answers what waited, in order. */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops the server and removes its data directory (not one given as `dir`). */
  async destroy(): Promise<void> {
    await this.stop();
    if (!this.options.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /** Resolves once this server, started as a replica, has its link to its master up. */
  async linkedToMaster(timeoutMs = 20_000): Promise<void> {
    const client = this.client();
    const deadline = Date.now() + timeoutMs;
    try {
      while (!(await client.info('replication')).includes('master_link_status:up')) {
        if (Date.now() > deadline)
          throw new Error(`${this.url}: no link to its master in ${timeoutMs} ms`);
        // The first sync has no event a client can wait for: ask again shortly.
        await delay(50);
      }
    } finally {
      client.disconnect();
    }
  }

  /** A client for assertions; the caller quits it. */
  client(): Redis {
    return new Redis(this.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  }
}
