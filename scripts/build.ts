// `npm run build`: each app as one JavaScript file, `apps/<app>/dist/main.js`, run with plain
// `node` (no TypeScript at run time). The workspace packages (`@pw/*`) are bundled in, with their
// Lua scripts (scripts/lua-files-plugin.ts); every other package stays an import from node_modules.
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import {
  buildConsole,
  CONSOLE_DIST,
  writeFileAtomically,
} from '../apps/dashboard/build-console.js';
import { APPS, appBundle } from './app-bundles.js';

const results = await Promise.all(APPS.map((app) => build(appBundle(app, resolve('.')))));
// Each file is written beside its place and renamed into it, so a process starting while another
// build runs (the tests and the bench both build) never reads half a file, and two builds at once
// never trip over each other.
for (const file of results.flatMap((result) => result.outputFiles ?? []))
  await writeFileAtomically(file.path, file.contents);
// The record store's migrations are read from `../migrations/` beside the module that runs them:
// bundled into apps/recorder/dist/main.js, that is apps/recorder/migrations (as in the image).
for (const name of await readdir('packages/records/migrations'))
  await writeFileAtomically(
    join('apps/recorder/migrations', name),
    await readFile(join('packages/records/migrations', name)),
  );
await buildConsole(CONSOLE_DIST);
console.log(
  `built ${APPS.map((app) => `apps/${app}/dist/main.js`).join(', ')}, the console in ${CONSOLE_DIST}`,
);
