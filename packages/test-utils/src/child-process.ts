import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams, StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { forgetReaped, reapWithTestRun } from './reaper.js';

/** The repository root, for running the apps the way `npm start` does. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface ChildRunOptions {
  /** Names the process in error messages. @defaultValue none */
  name?: string;
  /** Opens an IPC channel (a Node.js child's `process.send`), read with `message()`. @defaultValue false */
  ipc?: boolean;
  /** `stop()` sends SIGKILL if the process has not exited this long after its signal. @defaultValue never */
  killAfterMs?: number;
}

/** A process of the repository (`tsx <entry>` or an npm script) whose output is collected. */
export class ChildRun {
  output = '';
  private readonly waiting: { text: string; times: number; resolve: () => void }[] = [];
  readonly exited: Promise<number | null>;
  /** Rejects if the process exits before `stop()` is called; never settles otherwise. */
  readonly died: Promise<never>;
  private stopping = false;

  constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly options: ChildRunOptions = {},
  ) {
    const onData = (chunk: Buffer) => {
      this.output += chunk.toString();
      for (const wait of this.waiting.filter((w) => this.count(w.text) >= w.times)) wait.resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    this.exited = once(child, 'exit').then(([code]) => code as number | null);
    this.died = this.exited.then((code) => {
      if (this.stopping) return new Promise<never>(() => undefined);
      throw this.exitError(`exited (${code ?? child.signalCode}) before it was stopped`);
    });
    this.died.catch(() => undefined);
  }

  /** Starts `command args…` in the repository root with extra environment variables. */
  static start(
    command: string[],
    env: Record<string, string>,
    options: ChildRunOptions = {},
  ): ChildRun {
    const [file, ...args] = command;
    const stdio: StdioOptions = options.ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : 'pipe';
    // Its own process group, so whatever it starts (npm start's apps) can be cleaned up with it.
    const child = spawn(file!, args, {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      detached: true,
      stdio,
    });
    // That group dies with the test run too, when the run dies before stop() (turbo aborting it).
    const { pid } = child;
    if (pid !== undefined) {
      reapWithTestRun(pid);
      child.once('exit', () => forgetReaped(pid));
    }
    // Every standard stream is a pipe, with or without the IPC channel.
    return new ChildRun(child as ChildProcessWithoutNullStreams, options);
  }

  /** `node --import tsx <entry>`: one process, so a signal reaches the app itself. */
  static tsx(entry: string, env: Record<string, string>, options: ChildRunOptions = {}): ChildRun {
    return ChildRun.start([process.execPath, '--import', 'tsx', entry], env, options);
  }

  /** The process id, or -1 if it could not be started. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** How many times `text` appears in the output so far. */
  count(text: string): number {
    return this.output.split(text).length - 1;
  }

  /** Resolves once `text` has appeared `times` times; rejects if the process exits first. */
  printed(text: string, times = 1): Promise<void> {
    if (this.count(text) >= times) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiting.push({ text, times, resolve });
      void this.exited.then((code) =>
        reject(this.exitError(`exited (${code}) before printing "${text}"`)),
      );
    });
  }

  /** Polls `url` (a health endpoint) until it answers 2xx; rejects if the process exits first. */
  async answers(url: string, intervalMs = 100): Promise<void> {
    const poll = async () => {
      while (!this.hasExited()) {
        try {
          if ((await fetch(url)).ok) return;
        } catch {
          // not listening yet
        }
        await delay(intervalMs);
      }
    };
    const exit = this.exited.then((code) => {
      throw this.exitError(`exited (${code}) before ${url} answered`);
    });
    await Promise.race([poll(), exit]);
  }

  /** The next IPC message that `accept` takes (anything but undefined); rejects on exit first. */
  message<T>(accept: (message: unknown) => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        const taken = accept(message);
        if (taken === undefined) return;
        this.child.off('message', onMessage);
        resolve(taken);
      };
      this.child.on('message', onMessage);
      void this.exited.then((code) =>
        reject(this.exitError(`exited (${code}) before sending the message awaited`)),
      );
    });
  }

  /**
   * Sends `signal` to the process (`toGroup`: to its whole process group, as a terminal's Ctrl-C
   * does) and resolves with its exit code; then kills what is left of its process group (children
   * a SIGKILL orphaned), so no test leaves processes running.
   */
  async stop(
    signal: NodeJS.Signals = 'SIGTERM',
    killAfterMs = this.options.killAfterMs,
    toGroup = false,
  ): Promise<number | null> {
    this.stopping = true;
    if (!this.hasExited()) {
      if (toGroup && this.child.pid !== undefined) process.kill(-this.child.pid, signal);
      else this.child.kill(signal);
    }
    const timer =
      killAfterMs === undefined
        ? undefined
        : setTimeout(() => this.child.kill('SIGKILL'), killAfterMs);
    const code = await this.exited;
    clearTimeout(timer);
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: nothing left in the group.
    }
    return code;
  }

  private hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  private exitError(what: string): Error {
    const name = this.options.name ? `${this.options.name} ` : '';
    return new Error(`${name}${what}:\n${this.output}`);
  }
}
