import { ChromiumError, findChromium } from './chromium.js';

/** Runs a command quietly: undefined when it succeeded, else one line saying why not. */
export type RunCommand = (command: string, args: readonly string[]) => string | undefined;

export interface EnsureChromiumDeps {
  /** @defaultValue findChromium */
  find?: () => string | undefined;
  /** Whether Debian's package can be installed here: root, with `apt-get` on the PATH. */
  canUseApt: boolean;
  run: RunCommand;
  /** How to start playwright-core's command line, as `[command, ...args]`. */
  playwrightCli: readonly [string, ...string[]];
  /** Where the lines for the person running the tests go. */
  say: (line: string) => void;
}

interface Way {
  name: string;
  line: string;
  commands: readonly (readonly [string, ...string[]])[];
}

export const CHROMIUM_INSTALL_HINT =
  'install one with `apt-get install chromium` (as root), or set CHROMIUM_PATH to a Chromium or Chrome executable';

/**
 * Makes sure the browser tests have a Chromium: the one findChromium finds, else Debian's
 * `chromium` package (as root with apt-get), else playwright's own download. Says what it does in
 * one line; returns the Chromium's path, or undefined (having said what to install) when there is
 * none and none could be installed.
 */
export function ensureChromium(deps: EnsureChromiumDeps): string | undefined {
  const { find = findChromium, say } = deps;
  try {
    const found = find();
    if (found) {
      say(`chromium: using ${found}`);
      return found;
    }
    const ways: Way[] = [];
    if (deps.canUseApt) {
      ways.push({
        name: 'apt-get',
        line: "installing Debian's chromium package (apt-get install chromium)",
        commands: [
          ['apt-get', 'update', '-qq'],
          ['apt-get', 'install', '-y', '-qq', 'chromium'],
        ],
      });
    }
    ways.push({
      name: 'playwright',
      line: "downloading playwright's Chromium (playwright-core install chromium)",
      commands: [[...deps.playwrightCli, 'install', '--no-shell', '--no-progress', 'chromium']],
    });

    const failures: string[] = [];
    for (const way of ways) {
      say(`chromium: ${failures.at(-1) ?? 'none found'}; ${way.line}`);
      const failed = firstFailure(deps.run, way.commands);
      const path = failed === undefined ? find() : undefined;
      if (path) return path;
      failures.push(`${way.name} failed: ${failed ?? 'still no Chromium afterwards'}`);
    }
    say(
      `chromium: none found and none could be installed (${failures.join('; ')}); ${CHROMIUM_INSTALL_HINT}`,
    );
    return undefined;
  } catch (error) {
    if (!(error instanceof ChromiumError)) throw error;
    say(`chromium: ${error.message}`);
    return undefined;
  }
}

function firstFailure(
  run: RunCommand,
  commands: readonly (readonly [string, ...string[]])[],
): string | undefined {
  for (const [command, ...args] of commands) {
    const failed = run(command, args);
    if (failed !== undefined) return failed;
  }
  return undefined;
}
