// The Lua scripts as files (packages/*/src/lua, apps/*/src/lua): each opens with its header, and
// `npm run build` carries every one inside the bundles, which read them from themselves (no
// `.lua` file is copied into an image).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { appBundle } from '../../../scripts/app-bundles.js';
import type { BundledApp } from '../../../scripts/app-bundles.js';
import { embedLuaFiles } from '../../../scripts/lua-files-plugin.js';
import { repoPath, repoRoot } from '../src/repo.js';

/** Every `.lua` file of a workspace's `src/lua`, by its path from the repository root. */
function luaFiles(workspace: string): string[] {
  const folder = repoPath(`${workspace}/src/lua`);
  let entries;
  try {
    entries = readdirSync(folder, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.lua'))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)));
}

const WORKSPACES = ['packages/shared', 'apps/worker', 'apps/dashboard', 'apps/ingress'];
const ALL = WORKSPACES.flatMap(luaFiles);
const commands = ALL.filter((file) => !file.includes('/includes/'));

/**
 * The lines of a file as the bundle's string literal holds them: esbuild chooses the quotes (the
 * files' many `'` keep it from single ones), so lines with a `"`, a backtick, a backslash or `${`,
 * escaped in some literals, are left out.
 */
const comparableLines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/["`\\]|\$\{/.test(line));

/** The numbers `name[n]` a header names, single (`KEYS[3]`), as a range (`KEYS[2..6]`) or open. */
function named(header: string, name: string, n: number): boolean {
  const pattern = new RegExp(`${name}\\[(\\d+)(?:(\\.\\.\\.)|\\.\\.(\\d+))?\\]`, 'g');
  for (const [, from, open, to] of header.matchAll(pattern)) {
    const low = Number(from);
    if (n === low || (open && n >= low) || (to && n >= low && n <= Number(to))) return true;
  }
  return false;
}

describe('the Lua script files', () => {
  it('are where the loader looks for them', () => {
    for (const file of [
      'packages/shared/src/lua/intake.lua',
      'apps/worker/src/lua/circuit-enter-6.lua',
      'apps/dashboard/src/lua/login-attempt-1.lua',
    ])
      expect(commands).toContain(file);
  });

  for (const file of ALL) {
    it(`${file} opens with a header naming every KEYS[i] and ARGV[i] it uses, and its reply`, () => {
      const text = readFileSync(repoPath(file), 'utf8');
      expect(text.startsWith('--[[\n'), 'a --[[ ]] header first').toBe(true);
      const end = text.indexOf(']]');
      const header = text.slice(0, end);
      const body = text.slice(end);
      if (file.includes('/includes/')) return;
      expect(header).toContain('Input');
      expect(header).toContain('Output');
      for (const name of ['KEYS', 'ARGV']) {
        for (const [, n] of body.matchAll(new RegExp(`${name}\\[(\\d+)\\]`, 'g'))) {
          expect(named(header, name, Number(n)), `${name}[${n}] in the header`).toBe(true);
        }
      }
    });
  }
});

describe('the Lua scripts in the bundles', () => {
  const carried: Record<BundledApp, string[]> = {
    ingress: luaFiles('packages/shared'),
    worker: [...luaFiles('packages/shared'), ...luaFiles('apps/worker')],
    dashboard: [...luaFiles('packages/shared'), ...luaFiles('apps/dashboard')],
    recorder: luaFiles('packages/shared'),
    send: [],
  };
  for (const app of Object.keys(carried) as BundledApp[]) {
    it(`${app}: npm run build's bundle holds the text of every script it can run`, async () => {
      const { outputFiles = [] } = await build(appBundle(app, repoRoot));
      const bundle = outputFiles.find((file) => file.path.endsWith('main.js'))!.text;
      for (const file of carried[app]) {
        for (const line of comparableLines(readFileSync(repoPath(file), 'utf8'))) {
          expect(bundle.includes(line), `${file}: ${line} in apps/${app}/dist/main.js`).toBe(true);
        }
      }
    });
  }

  it('a bundle runs its scripts from the text it holds, with no .lua file beside it', async () => {
    const [intake, enter] = JSON.parse(await runProbe(true)) as [string, string];
    expect(intake).toContain("'PX', 10000");
    expect(enter).toContain('local function circuitFirstInLine');
    expect(enter).not.toContain('@include');
    // Without the build's plugin, the same bundle looks for files it does not have.
    await expect(runProbe(false)).rejects.toThrow(/no Lua file intake\.lua/);
  });
});

/**
 * Bundles, as `npm run build` does (with its Lua plugin or without), a probe that prints two
 * expanded scripts, runs it from a folder of its own, and resolves with its output.
 */
async function runProbe(embed: boolean): Promise<string> {
  const options = appBundle('worker', repoRoot);
  const { outputFiles = [] } = await build({
    ...options,
    entryPoints: undefined,
    outfile: 'probe.mjs',
    sourcemap: false,
    stdin: {
      contents: `import { INTAKE_COMMAND } from './packages/shared/src/intake/intake-commands.ts';
        import { ENTER } from './apps/worker/src/circuit-scripts.ts';
        console.log(JSON.stringify([INTAKE_COMMAND.lua, ENTER.lua]));`,
      resolveDir: repoRoot,
      loader: 'ts',
    },
    plugins: options.plugins!.filter((plugin) => embed || plugin !== embedLuaFiles),
  });
  // Beside node_modules, so its imports resolve; away from every src/lua.
  const cache = repoPath('node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const folder = mkdtempSync(join(cache, 'pw-lua-probe-'));
  try {
    const probe = join(folder, 'probe.mjs');
    writeFileSync(probe, outputFiles[0]!.contents);
    const { stdout } = await promisify(execFile)(process.execPath, [probe]);
    return stdout;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
