// The operator console's bundle: console/src (Preact and uPlot, TypeScript and CSS) built by
// esbuild into one script and one stylesheet beside index.html, served by the dashboard as static
// files (no CDN, no inline script or style: the console's Content-Security-Policy allows only its
// own origin). Run by `npm run build` and, before the dashboard starts, by `npm start`.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

/** Where the dashboard looks for the console, from the repository's root. */
export const CONSOLE_DIST = 'apps/dashboard/dist/console';

/** Writes `contents` beside `path` and renames it into place: a reader never sees half a file. */
export async function writeFileAtomically(path: string, contents: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, path);
}

/**
 * Builds the console into `outdir` (`index.html`, `console/app.js`, `console/app.css` and their
 * maps). Each file is written beside its place and renamed into it, so a dashboard serving the
 * console while a build runs never reads half a file, and two builds at once (the tests and the
 * bench both build) write the same files without tripping over each other.
 */
export async function buildConsole(outdir: string): Promise<void> {
  const result = await build({
    write: false,
    entryPoints: [join(here, 'console/src/main.tsx')],
    outfile: join(outdir, 'console/app.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: true,
    logLevel: 'warning',
  });
  for (const file of result.outputFiles) await writeFileAtomically(file.path, file.contents);
  await writeFileAtomically(
    join(outdir, 'index.html'),
    await readFile(join(here, 'console/src/index.html')),
  );
}
