// Run by `npm test` before the tests: makes sure the browser tests have a Chromium, installing
// Debian's package (as root with apt-get) or playwright's own download when none is found, and
// says so in one line; exits 1, with one line saying what to install, when neither is possible.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { ensureChromium } from '@pw/test-utils/ensure-chromium';
import type { RunCommand } from '@pw/test-utils/ensure-chromium';

/** Runs a command with its output kept back; a failure is told by its exit and its last error. */
const run: RunCommand = (command, args) => {
  const result = spawnSync(command, args, {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) return result.error.message;
  if (result.status === 0) return undefined;
  const lines = stripVTControlCharacters(`${result.stdout}\n${result.stderr}`)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  // apt-get's errors start with `E:`, node's with `Error:`; else the last thing it said.
  const reason = lines.findLast((line) => /^(E|Error):/.test(line)) ?? lines.at(-1);
  return `exited with ${result.status ?? result.signal}${reason ? `: ${reason}` : ''}`;
};

const playwrightPackage = createRequire(import.meta.url).resolve('playwright-core/package.json');

const path = ensureChromium({
  canUseApt: process.getuid?.() === 0 && run('apt-get', ['--version']) === undefined,
  run,
  playwrightCli: [process.execPath, join(dirname(playwrightPackage), 'cli.js')],
  say: (line) => console.log(line),
});
if (!path) process.exitCode = 1;
