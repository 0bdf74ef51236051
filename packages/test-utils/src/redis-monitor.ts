import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';

/** One command Redis ran, as MONITOR reports it. */
export interface MonitoredCommand {
  /** Redis's clock when it ran the command: `seconds.microseconds`. */
  time: string;
  /** `lua` for a command a script ran, else the calling client's address. */
  source: string;
  /** The command and its arguments, unescaped. */
  args: string[];
}

type Listener = (command: MonitoredCommand) => void;

/**
 * Redis MONITOR on a socket of its own, read line by line. A client library's monitor mode shares
 * its reply parser with ordinary commands, and under a busy feed it can take a monitor line for a
 * reply; here every line after the `+OK` is a command, nothing else.
 */
export class RedisMonitor {
  private readonly listeners = new Set<Listener>();
  private readonly markers = new Map<string, () => void>();
  private pending = '';
  private failure: Error | undefined;

  private constructor(
    private readonly feed: Socket,
    /** A plain connection for the markers `settle` sends. */
    private readonly caller: Socket,
  ) {
    feed.setEncoding('latin1');
    feed.on('data', (chunk: string) => this.read(chunk));
    feed.resume();
    for (const socket of [feed, caller]) {
      socket.on('error', (error) => this.fail(error));
      socket.on('close', () => this.fail(new Error('the MONITOR connection closed')));
    }
    caller.resume();
  }

  /** Starts watching the Redis at `url` (`redis://[:password@]host:port`). */
  static async start(url: string): Promise<RedisMonitor> {
    const feed = await open(url);
    const caller = await open(url);
    feed.write(command(['MONITOR']));
    await firstLine(feed, '+OK');
    return new RedisMonitor(feed, caller);
  }

  /**
   * Every command the Redis at `url` runs while `during` does, as MONITOR reports it, each that
   * `keep` keeps (all by default).
   */
  static async during(
    url: string,
    during: () => Promise<void>,
    keep: (command: MonitoredCommand) => boolean = () => true,
  ): Promise<MonitoredCommand[]> {
    const monitor = await RedisMonitor.start(url);
    const seen: MonitoredCommand[] = [];
    monitor.onCommand((command) => {
      if (keep(command)) seen.push(command);
    });
    try {
      await during();
      await monitor.settle();
    } finally {
      monitor.stop();
    }
    return seen;
  }

  /** Calls `listener` with each command from now on. */
  onCommand(listener: Listener): void {
    this.listeners.add(listener);
  }

  /**
   * Resolves once every command Redis ran before this call has been reported: Redis feeds MONITOR
   * in the order it runs commands, so a marker sent now arrives after them.
   */
  async settle(): Promise<void> {
    if (this.failure) throw this.failure;
    const marker = `monitor marker ${randomUUID()}`;
    const seen = new Promise<void>((resolve) => this.markers.set(marker, resolve));
    this.caller.write(command(['ECHO', marker]));
    await seen;
  }

  stop(): void {
    this.listeners.clear();
    this.failure ??= new Error('the monitor was stopped');
    this.feed.destroy();
    this.caller.destroy();
  }

  private read(chunk: string): void {
    this.pending += chunk;
    let end: number;
    while ((end = this.pending.indexOf('\r\n')) >= 0) {
      const line = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      if (!line.startsWith('+')) {
        this.fail(new Error(`MONITOR sent ${line}`));
        continue;
      }
      const seen = parseMonitorLine(line.slice(1));
      const marker = seen.args[0]?.toLowerCase() === 'echo' ? seen.args[1] : undefined;
      const settled = marker === undefined ? undefined : this.markers.get(marker);
      if (settled) {
        this.markers.delete(marker!);
        settled();
      } else for (const listener of this.listeners) listener(seen);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
  }
}

/** Parses `1795720128.430685 [0 127.0.0.1:5000] "HSET" "key" "a\"b"`. */
export function parseMonitorLine(line: string): MonitoredCommand {
  const space = line.indexOf(' ');
  const close = line.indexOf('] ', space);
  const [, source = ''] = line.slice(space + 2, close).split(' ');
  const args: string[] = [];
  let bytes: number[] | undefined;
  for (let at = close + 2; at < line.length; at++) {
    const char = line[at]!;
    if (bytes === undefined) {
      if (char === '"') bytes = [];
      continue;
    }
    if (char === '"') {
      args.push(Buffer.from(bytes).toString('utf8'));
      bytes = undefined;
    } else if (char === '\\') {
      const next = line[++at]!;
      if (next === 'x') {
        bytes.push(parseInt(line.slice(at + 1, at + 3), 16));
        at += 2;
      } else bytes.push((ESCAPES[next] ?? next).charCodeAt(0));
    } else bytes.push(char.charCodeAt(0));
  }
  return { time: line.slice(0, space), source, args };
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' };

function command(args: string[]): string {
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
}

async function open(url: string): Promise<Socket> {
  const { hostname, port, password, username } = new URL(url);
  const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
  await once(socket, 'connect');
  if (password) {
    const auth = username ? ['AUTH', username, password] : ['AUTH', password];
    socket.write(command(auth.map(decodeURIComponent)));
    await firstLine(socket, '+OK');
  }
  return socket;
}

/** Reads the socket's first line, which must be `expected`. */
async function firstLine(socket: Socket, expected: string): Promise<void> {
  let received = '';
  while (!received.includes('\r\n')) {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    received += chunk.toString('latin1');
  }
  const line = received.slice(0, received.indexOf('\r\n'));
  if (line !== expected) throw new Error(`Redis answered ${line}, not ${expected}`);
  // MONITOR's feed starts after its `+OK`; whatever came with it goes back to be read.
  socket.pause();
  const rest = received.slice(line.length + 2);
  if (rest) socket.unshift(Buffer.from(rest, 'latin1'));
}
