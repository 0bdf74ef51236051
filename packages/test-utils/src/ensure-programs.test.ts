import { describe, expect, it } from 'vitest';
import { CHROMIUM_ERROR_CODES, ChromiumError } from './chromium.js';
import { ensureProgram, ensurePrograms } from './ensure-programs.js';
import type { EnsureDeps, Program } from './ensure-programs.js';

const NPM_INSTALL = 'node cli.js install chromium';
const UPDATE = 'apt-get update -qq';
const aptInstall = (name: string) => `apt-get install -y -qq ${name}`;
const HINT = 'install one with `apt-get install chromium` (as root)';

/**
 * A machine where a program appears once the command in `installs` that names it has run, and
 * the commands in `failing` fail; it records the commands run and the lines said.
 */
function machine(options: {
  present?: Record<string, string>;
  canUseApt?: boolean;
  installs?: Record<string, [program: string, path: string]>;
  failing?: Record<string, string>;
}) {
  const present = { ...options.present };
  const ran: string[] = [];
  const said: string[] = [];
  const deps: EnsureDeps = {
    canUseApt: options.canUseApt ?? false,
    run: (command, args) => {
      const line = [command, ...args].join(' ');
      ran.push(line);
      const failure = options.failing?.[line];
      const installed = options.installs?.[line];
      if (failure === undefined && installed) present[installed[0]] = installed[1];
      return failure;
    },
    say: (text) => said.push(text),
  };
  const program = (name: string, extra: Partial<Program> = {}): Program => ({
    name,
    find: () => present[name],
    debianPackage: name,
    hint: HINT,
    ...extra,
  });
  return { deps, ran, said, program };
}

const npmWay = {
  line: 'downloading it (cli.js install chromium)',
  command: ['node', 'cli.js', 'install', 'chromium'],
} as const;

describe('ensureProgram', () => {
  it('uses the program that is there, names it and installs nothing', () => {
    const m = machine({ present: { chromium: '/usr/bin/chromium' }, canUseApt: true });
    expect(ensureProgram(m.program('chromium'), m.deps)).toBe('/usr/bin/chromium');
    expect(m.ran).toEqual([]);
    expect(m.said).toEqual(['chromium: using /usr/bin/chromium']);
  });

  it("installs Debian's package as root with apt-get, saying so in one line", () => {
    const m = machine({
      canUseApt: true,
      installs: { [aptInstall('chromium')]: ['chromium', '/usr/bin/chromium'] },
    });
    expect(ensureProgram(m.program('chromium', { npmWay }), m.deps)).toBe('/usr/bin/chromium');
    expect(m.ran).toEqual([UPDATE, aptInstall('chromium')]);
    expect(m.said).toEqual([
      "chromium: none found; installing Debian's chromium package (apt-get install chromium)",
    ]);
  });

  it("takes the npm registry's way when apt-get cannot be used", () => {
    const m = machine({ installs: { [NPM_INSTALL]: ['chromium', '/pw/chrome'] } });
    expect(ensureProgram(m.program('chromium', { npmWay }), m.deps)).toBe('/pw/chrome');
    expect(m.ran).toEqual([NPM_INSTALL]);
    expect(m.said).toEqual(['chromium: none found; downloading it (cli.js install chromium)']);
  });

  it("falls back to the npm registry's way when apt-get fails, and says why", () => {
    const m = machine({
      canUseApt: true,
      failing: { [UPDATE]: 'exited with 100: E: no network' },
      installs: { [NPM_INSTALL]: ['chromium', '/pw/chrome'] },
    });
    expect(ensureProgram(m.program('chromium', { npmWay }), m.deps)).toBe('/pw/chrome');
    expect(m.ran).toEqual([UPDATE, NPM_INSTALL]);
    expect(m.said[1]).toBe(
      'chromium: apt-get failed: exited with 100: E: no network; downloading it (cli.js install chromium)',
    );
  });

  it('stops with one line saying what to install when no way works', () => {
    const m = machine({
      canUseApt: true,
      failing: {
        [aptInstall('chromium')]: 'exited with 100',
        [NPM_INSTALL]: 'exited with 1: no network',
      },
    });
    expect(ensureProgram(m.program('chromium', { npmWay }), m.deps)).toBeUndefined();
    expect(m.said.at(-1)).toBe(
      'chromium: none found and none could be installed (apt-get failed: exited with 100; ' +
        `npm failed: exited with 1: no network); ${HINT}`,
    );
  });

  it('with no way to install it, says only what to install', () => {
    const m = machine({});
    expect(ensureProgram(m.program('prometheus'), m.deps)).toBeUndefined();
    expect(m.ran).toEqual([]);
    expect(m.said).toEqual([`prometheus: none found; ${HINT}`]);
  });

  it('counts an install after which still nothing is found as failed', () => {
    const m = machine({ canUseApt: true });
    expect(ensureProgram(m.program('prometheus'), m.deps)).toBeUndefined();
    expect(m.said.at(-1)).toContain('apt-get failed: still none found afterwards');
  });

  it('says what is configured wrongly and installs nothing', () => {
    const m = machine({ canUseApt: true });
    const find = () => {
      throw new ChromiumError(CHROMIUM_ERROR_CODES.pathNotExecutable, 'CHROMIUM_PATH=/x is bad');
    };
    expect(ensureProgram(m.program('chromium', { find, npmWay }), m.deps)).toBeUndefined();
    expect(m.ran).toEqual([]);
    expect(m.said).toEqual(['chromium: CHROMIUM_PATH=/x is bad']);
  });
});

describe('ensurePrograms', () => {
  it('runs apt-get update once for all, looks at every program, and is false when one is missing', () => {
    const m = machine({
      canUseApt: true,
      installs: {
        [aptInstall('prometheus')]: ['prometheus', '/usr/bin/promtool'],
        [aptInstall('redis-server')]: ['redis-server', '/usr/bin/redis-server'],
      },
    });
    const programs = ['prometheus', 'chromium', 'redis-server'].map((name) => m.program(name));
    expect(ensurePrograms(programs, m.deps)).toBe(false);
    expect(m.ran).toEqual([
      UPDATE,
      aptInstall('prometheus'),
      aptInstall('chromium'),
      aptInstall('redis-server'),
    ]);
    expect(m.said.filter((line) => line.includes(HINT))).toEqual([
      `chromium: none found and none could be installed (apt-get failed: still none found afterwards); ${HINT}`,
    ]);
  });
});
