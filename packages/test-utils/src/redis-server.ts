import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Redis } from 'ioredis';

/** A free TCP port on loopback, as the kernel hands one out. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface PrivateRedisOptions {
  /** @defaultValue a free port */
  port?: number;
  /** Turn the append-only file on (data survives a restart). @defaultValue false */
  appendOnly?: boolean;
  /** More `redis-server` arguments (`--cluster-enabled yes`, …). */
  args?: readonly string[];
}

/** A `redis-server` of the test's own on loopback, which the test may stop and start again. */
export class PrivateRedis {
  readonly port: number;
  readonly url: string;
  private child: ChildProcess | undefined;

  private constructor(
    port: number,
    private readonly dir: string,
    private readonly appendOnly: boolean,
    private readonly extraArgs: readonly string[] = [],
  ) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
  }

  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const dir = await mkdtemp(join(tmpdir(), 'pw-redis-'));
    const redis = new PrivateRedis(
      options.port ?? (await freePort()),
      dir,
      options.appendOnly ?? false,
      options.args,
    );
    await redis.resume();
    return redis;
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
    args.push('--appendonly', this.appendOnly ? 'yes' : 'no', ...this.extraArgs);
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
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

  /** Stops the server and removes its data directory. */
  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  /** A client for assertions; the caller quits it. */
  client(): Redis {
    return new Redis(this.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  }
}
