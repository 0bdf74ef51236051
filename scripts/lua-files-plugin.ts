// The Lua scripts in the bundles: each package's `src/lua/lua-files.ts` reads its folder's `.lua`
// files from disk (under tsx and vitest); in a bundle that module is replaced by one holding the
// files' text, so the built app, and the image that copies it, carry every script in main.js.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Plugin } from 'esbuild';

/** `export const NAME = luaFilesIn('origin', new URL('./', import.meta.url));` */
const DECLARATION =
  /export const (\w+) = luaFilesIn\('([^']+)', new URL\('\.\/', import\.meta\.url\)\);/;

/** Every `.lua` file under `folder`, by its path from it (`/`-separated). */
async function luaFiles(folder: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(folder, path).split(sep).join('/')] = await readFile(path, 'utf8');
  }
  return files;
}

/** The module that stands in for a `lua-files.ts`: the same export, the files embedded. */
export async function embeddedLuaModule(path: string): Promise<string> {
  const source = await readFile(path, 'utf8');
  const match = DECLARATION.exec(source);
  if (!match) throw new Error(`${path} does not declare its Lua files as the build expects`);
  const [, name, origin] = match;
  const files = await luaFiles(dirname(path));
  if (Object.keys(files).length === 0) throw new Error(`no Lua files beside ${path}`);
  return [
    `const files = ${JSON.stringify(files)};`,
    `export const ${name} = {`,
    `  origin: ${JSON.stringify(origin)},`,
    `  read: (path) => (Object.hasOwn(files, path) ? files[path] : undefined),`,
    `};`,
  ].join('\n');
}

export const embedLuaFiles: Plugin = {
  name: 'embed-lua-files',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]src[\\/]lua[\\/]lua-files\.ts$/ }, async (args) => ({
      contents: await embeddedLuaModule(args.path),
      loader: 'js',
      watchFiles: Object.keys(await luaFiles(dirname(args.path))).map((file) =>
        join(dirname(args.path), file),
      ),
    }));
  },
};
