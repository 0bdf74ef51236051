import { describe, expect, it } from 'vitest';
import { CHROMIUM_ERROR_CODES, ChromiumError } from './chromium.js';
import { CHROMIUM_INSTALL_HINT, ensureChromium } from './ensure-chromium.js';
import type { EnsureChromiumDeps } from './ensure-chromium.js';

const CLI = ['node', 'cli.js'] as const;
const PLAYWRIGHT_INSTALL = 'node cli.js install --no-shell --no-progress chromium';
const APT = ['apt-get update -qq', 'apt-get install -y -qq chromium'];

/**
 * A machine where Chromium appears at `installs` once that command has run, and the commands in
 * `failing` fail; it records the commands run and the lines said.
 */
function machine(options: {
  present?: string;
  canUseApt?: boolean;
  installs?: Record<string, string>;
  failing?: Record<string, string>;
  find?: () => string | undefined;
}) {
  let present = options.present;
  const ran: string[] = [];
  const said: string[] = [];
  const deps: EnsureChromiumDeps = {
    find: options.find ?? (() => present),
    canUseApt: options.canUseApt ?? false,
    run: (command, args) => {
      const line = [command, ...args].join(' ');
      ran.push(line);
      const failure = options.failing?.[line];
      if (failure === undefined) present = options.installs?.[line] ?? present;
      return failure;
    },
    playwrightCli: CLI,
    say: (text) => said.push(text),
  };
  return { deps, ran, said };
}

describe('ensureChromium', () => {
  it('uses the Chromium that is there, names it and installs nothing', () => {
    const m = machine({ present: '/usr/bin/chromium', canUseApt: true });
    expect(ensureChromium(m.deps)).toBe('/usr/bin/chromium');
    expect(m.ran).toEqual([]);
    expect(m.said).toEqual(['chromium: using /usr/bin/chromium']);
  });

  it("installs Debian's chromium as root with apt-get, saying so in one line", () => {
    const m = machine({ canUseApt: true, installs: { [APT[1]!]: '/usr/bin/chromium' } });
    expect(ensureChromium(m.deps)).toBe('/usr/bin/chromium');
    expect(m.ran).toEqual(APT);
    expect(m.said).toEqual([
      "chromium: none found; installing Debian's chromium package (apt-get install chromium)",
    ]);
  });

  it("downloads playwright's Chromium when apt-get cannot be used", () => {
    const m = machine({
      installs: { [PLAYWRIGHT_INSTALL]: '/home/dev/.cache/ms-playwright/chrome' },
    });
    expect(ensureChromium(m.deps)).toBe('/home/dev/.cache/ms-playwright/chrome');
    expect(m.ran).toEqual([PLAYWRIGHT_INSTALL]);
    expect(m.said).toEqual([
      "chromium: none found; downloading playwright's Chromium (playwright-core install chromium)",
    ]);
  });

  it("falls back to playwright's download when apt-get fails, and says why", () => {
    const m = machine({
      canUseApt: true,
      failing: { [APT[0]!]: 'exited with 100: E: no network' },
      installs: { [PLAYWRIGHT_INSTALL]: '/pw/chrome' },
    });
    expect(ensureChromium(m.deps)).toBe('/pw/chrome');
    expect(m.ran).toEqual([APT[0], PLAYWRIGHT_INSTALL]);
    expect(m.said[1]).toBe(
      'chromium: apt-get failed: exited with 100: E: no network; ' +
        "downloading playwright's Chromium (playwright-core install chromium)",
    );
  });

  it('stops with one line saying what to install when neither way works', () => {
    const m = machine({
      canUseApt: true,
      failing: { [APT[1]!]: 'exited with 100', [PLAYWRIGHT_INSTALL]: 'exited with 1: no network' },
    });
    expect(ensureChromium(m.deps)).toBeUndefined();
    expect(m.said.at(-1)).toBe(
      'chromium: none found and none could be installed (apt-get failed: exited with 100; ' +
        `playwright failed: exited with 1: no network); ${CHROMIUM_INSTALL_HINT}`,
    );
  });

  it('counts an install after which still no Chromium is found as failed', () => {
    const m = machine({});
    expect(ensureChromium(m.deps)).toBeUndefined();
    expect(m.said.at(-1)).toContain('playwright failed: still no Chromium afterwards');
  });

  it('says what is wrong with CHROMIUM_PATH and installs nothing', () => {
    const m = machine({
      canUseApt: true,
      find: () => {
        throw new ChromiumError(CHROMIUM_ERROR_CODES.pathNotExecutable, 'CHROMIUM_PATH=/x is bad');
      },
    });
    expect(ensureChromium(m.deps)).toBeUndefined();
    expect(m.ran).toEqual([]);
    expect(m.said).toEqual(['chromium: CHROMIUM_PATH=/x is bad']);
  });
});
