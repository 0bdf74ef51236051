import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expandLuaScript, INVALID_LUA_SCRIPT, luaCommand, luaFilesIn } from './lua-script.js';
import type { LuaFiles } from './lua-script.js';

/** Lua files held in memory, counting the reads of each. */
function files(origin: string, texts: Record<string, string>) {
  const reads: Record<string, number> = {};
  const source: LuaFiles = {
    origin,
    read(path) {
      reads[path] = (reads[path] ?? 0) + 1;
      return texts[path];
    },
  };
  return { source, reads };
}

const failure = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a failure');
};

describe('Lua script files', () => {
  it('puts each include in place once, where it is first included, across packages', () => {
    const shared = files('shared', {
      'includes/a.lua': 'local function a() end',
      'includes/b.lua': '--- @include "includes/a"\nlocal function b() end',
    });
    const app = files('app', {
      'main-1.lua': '--- @include "includes/b"\n--- @include "includes/a"\nreturn b()',
    });
    const lua = expandLuaScript({ file: 'main-1.lua', sources: [app.source, shared.source] });
    expect(lua).toBe('local function a() end\nlocal function b() end\n\nreturn b()');
  });

  it('replaces named placeholders from the table given, and refuses unknown or malformed ones', () => {
    const { source } = files('app', { 'x.lua': 'return ${LIMIT} + ${LIMIT}', 'y.lua': '${ NO }' });
    const expand = (file: string, constants = {}) =>
      expandLuaScript({ file, sources: [source], constants });
    expect(expand('x.lua', { LIMIT: 7 })).toBe('return 7 + 7');
    const unknown = failure(() => expand('x.lua', { OTHER: 1 }));
    expect(unknown.code).toBe(INVALID_LUA_SCRIPT);
    expect(unknown.message).toContain('${LIMIT}');
    expect(failure(() => expand('y.lua')).message).toContain('left unreplaced');
  });

  it('refuses a missing file, an include cycle, and a path two packages both have', () => {
    const a = files('a', {
      'c.lua': '--- @include "includes/d"',
      'includes/d.lua': '--- @include "c"',
      'includes/e.lua': '',
    });
    const b = files('b', { 'includes/e.lua': '' });
    const expand = (text: string) =>
      expandLuaScript({ file: 'c.lua', sources: [files('m', { 'c.lua': text }).source, b.source] });
    expect(failure(() => expand('--- @include "includes/none"')).message).toContain('no Lua file');
    const cycle = failure(() => expandLuaScript({ file: 'c.lua', sources: [a.source] }));
    expect(cycle.message).toContain('cycle');
    const both = failure(() =>
      expandLuaScript({ file: 'includes/e.lua', sources: [a.source, b.source] }),
    );
    expect(both.message).toContain('more than one');
  });

  it('a command takes its number of keys from its file name and reads its file once', () => {
    const { source, reads } = files('app', { 'take-2.lua': 'return 1', 'any.lua': 'return 2' });
    const take = luaCommand({ name: 'pwTake', file: 'take-2.lua', sources: [source] });
    expect(take.numberOfKeys).toBe(2);
    expect(reads['take-2.lua']).toBeUndefined();
    expect([take.lua, take.lua]).toEqual(['return 1', 'return 1']);
    expect(reads['take-2.lua']).toBe(1);
    const any = luaCommand({ name: 'pwAny', file: 'any.lua', sources: [source] });
    expect(any.numberOfKeys).toBeUndefined();
    expect('numberOfKeys' in any).toBe(false);
  });

  it('reads a folder: each file once per process, none when absent', () => {
    const folder = mkdtempSync(join(tmpdir(), 'pw-lua-'));
    try {
      writeFileSync(join(folder, 'one.lua'), 'return 1');
      const source = luaFilesIn('test', pathToFileURL(`${folder}/`));
      expect(source.read('one.lua')).toBe('return 1');
      writeFileSync(join(folder, 'one.lua'), 'return 2');
      expect(source.read('one.lua')).toBe('return 1');
      expect(source.read('two.lua')).toBeUndefined();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
