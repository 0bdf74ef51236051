import { fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';

/** A child process of the bench, with its output kept for when something goes wrong. */
export class Child {
  output = '';
  readonly exited: Promise<number | null>;
  /** Rejects if the process exits before `stop()` is called (never settles otherwise). */
  readonly died: Promise<never>;
  private stopping = false;

  constructor(
    readonly name: string,
    readonly process: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    process.stdout?.on('data', keep);
    process.stderr?.on('data', keep);
    this.exited = once(process, 'exit').then(([code]) => code as number | null);
    this.died = this.exited.then((code) => {
      if (this.stopping) return new Promise<never>(() => undefined);
      throw new Error(
        `${this.name} exited (${code ?? this.process.signalCode}) in the middle of a phase:\n${this.output}`,
      );
    });
    this.died.catch(() => undefined);
  }

  static node(name: string, args: string[], env: Record<string, string>): Child {
    return new Child(
      name,
      spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: 'pipe' }),
    );
  }

  /** `node --import tsx <file>` with an IPC channel, for a TypeScript helper of the bench's own. */
  static fork(name: string, file: string, env: Record<string, string>): Child {
    return new Child(
      name,
      fork(file, [], {
        env: { ...process.env, ...env },
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      }),
    );
  }

  /** The next IPC message that `accept` takes; rejects if the process exits first. */
  message<T>(accept: (message: unknown) => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        const taken = accept(message);
        if (taken === undefined) return;
        this.process.off('message', onMessage);
        resolve(taken);
      };
      this.process.on('message', onMessage);
      void this.exited.then((code) =>
        reject(new Error(`${this.name} exited (${code}):\n${this.output}`)),
      );
    });
  }

  get pid(): number {
    return this.process.pid ?? -1;
  }

  /** Resolves once `text` is printed; rejects if the process exits first. */
  async printed(text: string, times = 1): Promise<void> {
    const count = () => this.output.split(text).length - 1;
    if (count() >= times) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (count() < times) return;
        this.process.stdout?.off('data', check);
        this.process.stderr?.off('data', check);
        resolve();
      };
      this.process.stdout?.on('data', check);
      this.process.stderr?.on('data', check);
      void this.exited.then((code) =>
        reject(
          new Error(`${this.name} exited (${code}) before printing "${text}":\n${this.output}`),
        ),
      );
    });
  }

  /** SIGTERM, and SIGKILL if it has not exited `graceMs` later; resolves once it has exited. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

function rssKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The pids of `pid`'s children (the ingress cluster's processes). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** RSS in MB of a process and its children: together, and the largest one. */
export function treeRssMb(pid: number): { total: number; largest: number } {
  const each = [pid, ...childrenOf(pid)].map((one) => rssKb(one) / 1024);
  return { total: each.reduce((sum, mb) => sum + mb, 0), largest: Math.max(...each) };
}

/** Samples the peak RSS of some process trees every 250 ms until stopped. */
export class RssSampler {
  readonly peakMb: Record<string, number> = {};
  private readonly peakLargestMb: Record<string, number> = {};
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: Record<string, number>) {
    this.timer = setInterval(() => this.sample(), 250);
    this.sample();
  }

  /** Samples one more process tree from now on. */
  add(name: string, pid: number): void {
    this.pids[name] = pid;
    this.sample();
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const rss = treeRssMb(pid);
      this.peakMb[name] = Math.max(this.peakMb[name] ?? 0, rss.total);
      this.peakLargestMb[name] = Math.max(this.peakLargestMb[name] ?? 0, rss.largest);
    }
  }

  /** The peak RSS of the largest single process of `name`'s tree. */
  peakProcessMb(name: string): number {
    return Math.round(this.peakLargestMb[name] ?? 0);
  }

  stop(): Record<string, number> {
    this.sample();
    clearInterval(this.timer);
    return Object.fromEntries(
      Object.entries(this.peakMb).map(([name, mb]) => [name, Math.round(mb)]),
    );
  }
}
