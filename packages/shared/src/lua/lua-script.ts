import { readFileSync } from 'node:fs';
import { PwError } from '../errors.js';
import type { LuaCommand } from '../redis.js';

/** A Lua file is missing, includes itself, or holds a placeholder nobody gave a value for. */
export const INVALID_LUA_SCRIPT = 'invalid_lua_script';

/**
 * One package's Lua files, by their path from its `lua/` folder (`intake.lua`,
 * `includes/nowMs.lua`). Read from disk under tsx and vitest; the build embeds them in each bundle
 * instead (scripts/lua-files-plugin.ts), so an image carries no `.lua` file of its own.
 */
export interface LuaFiles {
  /** The package, named in errors. */
  origin: string;
  /** The file's text; undefined when there is none at `path`. */
  read(path: string): string | undefined;
}

/** The Lua files in `folder` (a `file:` URL ending in `/`), each read at most once per process. */
export function luaFilesIn(origin: string, folder: URL): LuaFiles {
  const texts = new Map<string, string | undefined>();
  return {
    origin,
    read(path) {
      if (!texts.has(path)) texts.set(path, readIfPresent(new URL(path, folder)));
      return texts.get(path);
    },
  };
}

function readIfPresent(file: URL): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export interface LuaScriptOptions {
  /** The Redis command it is run as (`pwIntake`). */
  name: string;
  /**
   * The file: `<name>-<number of keys>.lua` (BullMQ's naming), or `<name>.lua` when each call
   * says how many keys follow, first.
   */
  file: string;
  /** Where the file and its includes are looked for; a path found in two of them is an error. */
  sources: readonly LuaFiles[];
  /** The value of each `${NAME}` placeholder: constants whose one source is TypeScript. */
  constants?: Readonly<Record<string, string | number>>;
}

/** `--- @include "includes/name"` on a line of its own: that file (`.lua` added), once per script. */
const INCLUDE = /^--- @include "([^"]+)"[ \t]*$/gm;
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const invalid = (message: string) => new PwError(INVALID_LUA_SCRIPT, message);

/** The text of `path`, from the one source that has it. */
function readFrom(sources: readonly LuaFiles[], path: string): string {
  const found = sources.map((source) => source.read(path)).filter((text) => text !== undefined);
  const origins = sources.map((source) => source.origin).join(', ');
  if (found.length === 0) throw invalid(`no Lua file ${path} in ${origins}`);
  if (found.length > 1) throw invalid(`Lua file ${path} is in more than one of ${origins}`);
  return found[0]!;
}

/** `path` with its includes in place: each file once, where it is first included. */
function withIncludes(
  path: string,
  sources: readonly LuaFiles[],
  included: Set<string>,
  chain: readonly string[],
): string {
  return readFrom(sources, path).replace(INCLUDE, (_line, target: string) => {
    const file = `${target}.lua`;
    if (chain.includes(file) || file === path) {
      throw invalid(`Lua include cycle: ${[...chain, path, file].join(' -> ')}`);
    }
    if (included.has(file)) return '';
    included.add(file);
    return withIncludes(file, sources, included, [...chain, path]);
  });
}

/** `lua` with every placeholder replaced; an unknown or malformed one is an error. */
function withConstants(
  file: string,
  lua: string,
  constants: Readonly<Record<string, string | number>>,
): string {
  const replaced = lua.replace(PLACEHOLDER, (_match, name: string) => {
    const value = Object.hasOwn(constants, name) ? constants[name] : undefined;
    if (value === undefined) throw invalid(`${file}: no value for the placeholder \${${name}}`);
    return String(value);
  });
  const left = /\$\{[^}\n]*\}?/.exec(replaced);
  if (left) throw invalid(`${file}: placeholder ${left[0]} left unreplaced`);
  return replaced;
}

/** The whole text of a script file: its includes in place, its placeholders replaced. */
export function expandLuaScript(options: Omit<LuaScriptOptions, 'name'>): string {
  const included = new Set([options.file]);
  const lua = withIncludes(options.file, options.sources, included, []);
  return withConstants(options.file, lua, options.constants ?? {});
}

/**
 * A script file as a Redis command for `withCommand` (ioredis sends EVALSHA, and EVAL when Redis
 * does not know the script). The file is read and expanded on first use, then kept.
 */
export function luaCommand(options: LuaScriptOptions): LuaCommand {
  const keys = /-(\d+)\.lua$/.exec(options.file)?.[1];
  let lua: string | undefined;
  return {
    name: options.name,
    ...(keys === undefined ? {} : { numberOfKeys: Number(keys) }),
    get lua() {
      lua ??= expandLuaScript(options);
      return lua;
    },
  };
}
