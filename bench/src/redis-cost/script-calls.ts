// Which script each EVALSHA ran, and its calls and time: Redis counts every script under
// `evalsha`. Its slowlog, told to keep every command (`slowlog-log-slower-than 0`), gives each
// call with its duration (the clock of `INFO commandstats`), the script's SHA1, and the client
// (a script's own commands come from the script client). A MONITOR connection, in a pass of its
// own, sees each script's text when a connection first runs it (ioredis sends EVAL with the text
// once per connection, EVALSHA after), which names the SHA1. Both cost Redis time, so these passes
// are apart from the rounds that measure CPU.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import { RedisMonitor } from '@pw/test-utils';
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

/** The project's Lua files (`intake.lua`, `action-start-4.lua`) by their opening. */
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
  private monitor: RedisMonitor | undefined;

  /** `luaFolders`: the folders of the project's `.lua` files. */
  constructor(luaFolders: readonly string[]) {
    this.names = bullmqScripts();
    this.openings = projectScripts(luaFolders);
  }

  /** Starts watching `url` for scripts being loaded. */
  async watch(url: string): Promise<void> {
    const monitor = await RedisMonitor.start(url);
    monitor.onCommand(({ args }) => {
      const command = args[0]?.toLowerCase();
      if (command === 'eval' && args[1]) this.learn(args[1]);
      if (command === 'script' && args[1]?.toLowerCase() === 'load' && args[2]) {
        this.learn(args[2]);
      }
    });
    this.monitor = monitor;
  }

  /** Stops watching, once every script loaded so far has been seen. */
  async stop(): Promise<void> {
    await this.monitor?.settle();
    this.monitor?.stop();
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

type SlowlogEntry = [id: number, time: number, usec: number, args: string[], client: string];

/** What the slowlog gave for one window: the calls clients sent, and those scripts made. */
export interface LoggedCalls {
  /** By command, EVALSHA and EVAL by script (`evalsha bullmq moveToFinished`). */
  topLevel: Map<string, CommandFigure>;
  /** The commands each script ran (`bullmq moveToFinished > HSET`). */
  inScripts: Map<string, CommandFigure>;
}

/** A script's own commands are logged with the script client's address, `?:0`. */
const fromScript = (client: string) => !/:[1-9]\d*$/.test(client);

const add = (calls: Map<string, CommandFigure>, name: string, usec: number) => {
  const figure = calls.get(name) ?? { calls: 0, usec: 0 };
  calls.set(name, { calls: figure.calls + 1, usec: figure.usec + usec });
};

/**
 * The calls logged since the last reading; the log is read and emptied in one transaction. A
 * script's commands are logged just before the script itself, once it has returned.
 */
export async function loggedCalls(redis: Redis, namer: ScriptNamer): Promise<LoggedCalls> {
  const replies = await redis.multi().call('SLOWLOG', 'GET', '-1').call('SLOWLOG', 'RESET').exec();
  const entries = ((replies?.[0]?.[1] ?? []) as SlowlogEntry[]).reverse();
  const logged: LoggedCalls = { topLevel: new Map(), inScripts: new Map() };
  let pending: SlowlogEntry[] = [];
  for (const entry of entries) {
    const [, , usec, args, client] = entry;
    if (fromScript(client)) {
      pending.push(entry);
      continue;
    }
    const name = callName(args, namer);
    add(logged.topLevel, name, usec);
    const script = name.replace(/^evalsha |^eval /, '');
    for (const [, , nestedUsec, nested] of pending) {
      add(logged.inScripts, `${script} > ${(nested[0] ?? '').toUpperCase()}`, nestedUsec);
    }
    pending = [];
  }
  return logged;
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
