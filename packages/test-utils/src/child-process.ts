import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The repository root, for running the apps the way `npm start` does. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** A process of the repository (`tsx <entry>` or an npm script) whose output is collected. */
export class ChildRun {
  output = '';
  private readonly waiting: { text: string; times: number; resolve: () => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    const onData = (chunk: Buffer) => {
      this.output += chunk.toString();
      for (const wait of this.waiting.filter((w) => this.count(w.text) >= w.times)) wait.resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    this.exited = once(child, 'exit').then(([code]) => code as number | null);
  }

  /** Starts `command args…` in the repository root with extra environment variables. */
  static start(command: string[], env: Record<string, string>): ChildRun {
    const [file, ...args] = command;
    return new ChildRun(spawn(file!, args, { cwd: repoRoot, env: { ...process.env, ...env } }));
  }

  /** `node --import tsx <entry>`: one process, so a signal reaches the app itself. */
  static tsx(entry: string, env: Record<string, string>): ChildRun {
    return ChildRun.start([process.execPath, '--import', 'tsx', entry], env);
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
        reject(new Error(`exited (${code}) before printing "${text}":\n${this.output}`)),
      );
    });
  }

  /** Sends `signal` and resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}
