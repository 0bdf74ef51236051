// Which script each EVALSHA ran, and its calls and time: Redis counts every script under
// `evalsha`. Its slowlog, told to keep every command (`slowlog-log-slower-than 0`), gives each
// top-level call with its duration (the same clock as `INFO commandstats`) and the script's SHA1;
// a MONITOR connection sees each script's text once, when a client loads it (EVAL or SCRIPT
// LOAD after SCRIPT FLUSH), which names the SHA1. Both cost Redis time of their own, so this pass
// is apart from the rounds that measure CPU.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import type { CommandFigure } from './command-stats.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** One script's opening, long enough to tell the scripts apart (their header comments differ). */
const OPENING = 160;

/** BullMQ's scripts by SHA1 of their text (`bullmq moveToFinished`). */
function bullmqScripts(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const scripts = require(
    join(dirname(require.resolve('bullmq')), 'scripts', 'index.js'),
  ) as Record<string, { name: string; content: string }>;
  return new Map(Object.values(scripts).map((s) => [sha1(s.content), `bullmq ${s.name}`]));
}

/** The project's Lua files (`intake.lua`, `action-start-9.lua`) by their opening. */
function projectScripts(folders: readonly string[]): Map<string, string> {
  const openings = new Map<string, string>();
  for (const folder of folders) {
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.lua'))) {
      openings.set(readFileSync(join(folder, file), 'utf8').slice(0, OPENING), file);
    }
  }
  return openings;
}

/** Names scripts by SHA1 from the texts a MONITOR connection sees loaded. */
export class ScriptNamer {
  private readonly names: Map<string, string>;
  private readonly openings: Map<string, string>;
  /** The texts seen loaded, by SHA1. */
  private readonly texts = new Map<string, string>();
  private monitor: Redis | undefined;

  /** `luaFolders`: the folders of the project's `.lua` files. */
  constructor(luaFolders: readonly string[]) {
    this.names = bullmqScripts();
    this.openings = projectScripts(luaFolders);
  }

  /** Starts watching `url` for scripts being loaded. */
  async watch(url: string): Promise<void> {
    // `monitor()` opens a connection of its own.
    const client = new Redis(url);
    const monitor = await client.monitor().finally(() => client.disconnect());
    monitor.on('monitor', (_time: string, args: string[]) => {
      const command = args[0]?.toLowerCase();
      if (command === 'eval' && args[1]) this.learn(args[1]);
      if (command === 'script' && args[1]?.toLowerCase() === 'load' && args[2]) this.learn(args[2]);
    });
    this.monitor = monitor;
  }

  stop(): void {
    this.monitor?.disconnect();
  }

  /** The script's name, or its SHA1's first 12 characters when its text was never seen. */
  nameOf(sha: string): string {
    return this.names.get(sha) ?? `script ${sha.slice(0, 12)}`;
  }

  /** The name of the script a slowlog's truncated EVAL argument opens. */
  nameOfOpening(truncated: string): string {
    const opening = truncated.replace(/\.\.\. \(\d+ more bytes\)$/, '');
    for (const [sha, name] of this.names) if (this.texts.get(sha)?.startsWith(opening)) return name;
    return 'an unknown script';
  }

  private learn(text: string): void {
    const sha = sha1(text);
    this.texts.set(sha, text);
    if (this.names.has(sha)) return;
    const file = this.openings.get(text.slice(0, OPENING));
    this.names.set(sha, file ? `lua ${file}` : `script ${sha.slice(0, 12)}`);
  }
}

/** Sets Redis to log every command, keeping up to `maxEntries` of them. */
export async function logEveryCommand(redis: Redis, maxEntries = 2_000_000): Promise<void> {
  await redis.config('SET', 'slowlog-max-len', String(maxEntries));
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.call('SLOWLOG', 'RESET');
}

type SlowlogEntry = [id: number, time: number, usec: number, args: string[], ...rest: unknown[]];

/**
 * The top-level calls logged since the last reading, by command, EVALSHA and EVAL by script
 * (`evalsha bullmq moveToFinished`); the log is read and emptied in one transaction.
 */
export async function topLevelCalls(
  redis: Redis,
  namer: ScriptNamer,
): Promise<Map<string, CommandFigure>> {
  const replies = await redis.multi().call('SLOWLOG', 'GET', '-1').call('SLOWLOG', 'RESET').exec();
  const entries = (replies?.[0]?.[1] ?? []) as SlowlogEntry[];
  const calls = new Map<string, CommandFigure>();
  for (const [, , usec, args] of entries) {
    const name = callName(args, namer);
    const figure = calls.get(name) ?? { calls: 0, usec: 0 };
    calls.set(name, { calls: figure.calls + 1, usec: figure.usec + usec });
  }
  return calls;
}

function callName(args: string[], namer: ScriptNamer): string {
  const command = (args[0] ?? '').toLowerCase();
  if (command === 'evalsha') return `evalsha ${namer.nameOf(args[1] ?? '')}`;
  if (command === 'eval') return `eval ${namer.nameOfOpening(args[1] ?? '')}`;
  if (['config', 'script', 'client', 'slowlog'].includes(command) && args[1]) {
    return `${command}|${args[1].toLowerCase()}`;
  }
  return command;
}
