// One measured window of Redis work: `CONFIG RESETSTAT` and Redis's CPU time at its start,
// `INFO commandstats`, the reads of clients' sockets and the CPU time at its end, less the calls
// the measurer made itself.
import type { Redis } from 'ioredis';
import { parseCommandStats, parseCpuMs, parseReads, withoutOwnCalls } from './command-stats.js';
import type { CommandFigure } from './command-stats.js';

/** What Redis did in one window, for `units` webhooks or actions. */
export interface Window {
  commands: Map<string, CommandFigure>;
  cpuMs: number;
  /** Reads of clients' sockets (`total_reads_processed`), less one per call of the measurer's. */
  reads: number;
  units: number;
}

export class RedisMeter {
  private cpuAtStart = 0;
  private readonly own = new Map<string, number>();

  /** `onStart`: run as a window starts, after the counts are reset (the slowlog emptied). */
  constructor(
    private readonly redis: Redis,
    private readonly onStart: () => Promise<unknown> = () => Promise.resolve(),
  ) {}

  /** The calls the measurer made in the current window, by command. */
  get ownCalls(): ReadonlyMap<string, number> {
    return this.own;
  }

  /** Starts a window: the counts reset, the CPU time so far kept. */
  async start(): Promise<void> {
    this.own.clear();
    await this.redis.config('RESETSTAT');
    this.cpuAtStart = parseCpuMs(await this.redis.info('cpu'));
    this.counted('config|resetstat');
    this.counted('info');
    await this.onStart();
  }

  /** Notes one call of `command` that the measurer made in the window (a poll). */
  counted(command: string, calls = 1): void {
    this.own.set(command, (this.own.get(command) ?? 0) + calls);
  }

  /** Ends the window: what Redis did in it, over `units`. */
  async end(units: number): Promise<Window> {
    const info = (await this.redis.call('INFO', 'commandstats', 'cpu', 'stats')) as string;
    let own = 0;
    for (const calls of this.own.values()) own += calls;
    return {
      commands: withoutOwnCalls(parseCommandStats(info), this.own),
      cpuMs: parseCpuMs(info) - this.cpuAtStart,
      reads: Math.max(0, parseReads(info) - own),
      units,
    };
  }
}
