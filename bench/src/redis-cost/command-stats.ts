// Redis's own count of the commands it ran (`INFO commandstats`) and of its CPU time (`INFO cpu`),
// read as figures. A script's own commands are counted twice there: inside its EVALSHA's time,
// and again under their own names (the slowlog tells them apart, script-calls.ts).

/** Calls and microseconds spent inside one command, as Redis counts them. */
export interface CommandFigure {
  calls: number;
  usec: number;
}

/** One reading: each command's figures (`config|resetstat`, `evalsha`, ...) and Redis's CPU. */
export interface RedisReading {
  commands: Map<string, CommandFigure>;
  /** `used_cpu_user` + `used_cpu_sys`, in ms. */
  cpuMs: number;
}

const COMMAND_LINE = /^cmdstat_([^:\s]+):calls=(\d+),usec=(\d+)/gm;

/** The commands of an `INFO commandstats` reply, by name (subcommands as `config|get`). */
export function parseCommandStats(info: string): Map<string, CommandFigure> {
  const commands = new Map<string, CommandFigure>();
  for (const [, name, calls, usec] of info.matchAll(COMMAND_LINE)) {
    commands.set(name!, { calls: Number(calls), usec: Number(usec) });
  }
  return commands;
}

/** `used_cpu_user` + `used_cpu_sys` of an `INFO cpu` reply, in ms. */
export function parseCpuMs(info: string): number {
  const seconds = (name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return 1000 * (seconds('used_cpu_user') + seconds('used_cpu_sys'));
}

/**
 * `total_reads_processed` of an `INFO stats` reply: the reads Redis made of its clients' sockets,
 * one per wake-up that found requests (several requests sent in one write arrive in one read).
 */
export function parseReads(info: string): number {
  return Number(/^total_reads_processed:(\d+)/m.exec(info)?.[1] ?? 0);
}

/** What ran between two readings: each command's calls and µs that were added, zeros left out. */
export function commandsBetween(
  before: ReadonlyMap<string, CommandFigure>,
  after: ReadonlyMap<string, CommandFigure>,
): Map<string, CommandFigure> {
  const added = new Map<string, CommandFigure>();
  for (const [name, now] of after) {
    const then = before.get(name) ?? { calls: 0, usec: 0 };
    if (now.calls > then.calls) {
      added.set(name, { calls: now.calls - then.calls, usec: now.usec - then.usec });
    }
  }
  return added;
}

/**
 * The figures without the calls the measurer itself made (`own`: calls by command, its polls);
 * their µs cannot be told apart and stay in.
 */
export function withoutOwnCalls(
  commands: ReadonlyMap<string, CommandFigure>,
  own: ReadonlyMap<string, number>,
): Map<string, CommandFigure> {
  const left = new Map<string, CommandFigure>();
  for (const [name, figure] of commands) {
    const calls = figure.calls - (own.get(name) ?? 0);
    if (calls > 0) left.set(name, { calls, usec: figure.usec });
  }
  return left;
}
