import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `path` is a file this process may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable file named `name` in the folders of `pathVariable` (a `PATH`). */
export function findOnPath(name: string, pathVariable: string | undefined): string | undefined {
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    // An empty entry means the current folder to a shell; never to us.
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** Every one of `names` found on `pathVariable`, joined by `, `; undefined when one is missing. */
export function findAllOnPath(
  names: readonly string[],
  pathVariable: string | undefined,
): string | undefined {
  const found = names.map((name) => findOnPath(name, pathVariable));
  return found.every(Boolean) ? found.join(', ') : undefined;
}
