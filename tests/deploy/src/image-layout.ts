// An image's files without Docker: the COPY instructions of a build target and of the stages it is
// built FROM, carried out from this checkout into a folder that stands for the image's WORKDIR
// (/app). What they copy from the `build` stage is taken from the checkout after `npm run build`
// (the build stage runs the same), the build context's files from the checkout itself.
import { cpSync, existsSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { copyParts, lineage } from './dockerfile.js';
import type { Stage } from './dockerfile.js';
import { repoPath } from './repo.js';

/** The image's WORKDIR, where `COPY --from=build /app/…` takes its files from. */
const WORKDIR = '/app/';

/**
 * Lays out the files of `target` in `into` (an empty folder), parents first. The production
 * node_modules (`COPY --from=runtime-deps /app ./`) are stood in for by a link to this checkout's
 * node_modules, which hold every package: what `--omit=dev` leaves out is checked on the lock file.
 */
export function layOutImage(stages: Stage[], target: string, into: string): void {
  for (const stage of lineage(stages, target).reverse()) {
    for (const copy of stage.instructions.filter(({ keyword }) => keyword === 'COPY')) {
      const { flags, sources, destination } = copyParts(copy);
      if (flags.from === 'runtime-deps') {
        if (sources.join() !== '/app' || !['./', '.'].includes(destination))
          throw new Error(`line ${copy.line}: unexpected copy from runtime-deps`);
        symlinkSync(repoPath('node_modules'), join(into, 'node_modules'), 'dir');
        continue;
      }
      if (flags.from !== undefined && flags.from !== 'build')
        throw new Error(`line ${copy.line}: a copy from ${flags.from} is not laid out here`);
      for (const source of sources) {
        if (flags.from === 'build' && !source.startsWith(WORKDIR))
          throw new Error(`line ${copy.line}: ${source} is outside the build stage's ${WORKDIR}`);
        const relative = flags.from === 'build' ? source.slice(WORKDIR.length) : source;
        const path = repoPath(relative);
        if (!existsSync(path))
          throw new Error(
            flags.from === 'build'
              ? `line ${copy.line}: the build stage has no ${relative}: \`npm run build\` does not write it`
              : `line ${copy.line}: ${relative} is not in the build context`,
          );
        // Docker's rules: a folder's contents go to the destination; a file goes to it, or into it
        // when it ends with `/`.
        const target =
          destination.endsWith('/') && !statSync(path).isDirectory()
            ? join(into, destination, basename(path))
            : join(into, destination);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(path, target, { recursive: true });
      }
    }
  }
}

/** The sources the app target copies from the build stage, as paths of this checkout. */
export const buildOutputs = (stages: Stage[], target: string): string[] =>
  lineage(stages, target)
    .flatMap((stage) => stage.instructions.filter(({ keyword }) => keyword === 'COPY'))
    .map(copyParts)
    .filter(({ flags }) => flags.from === 'build')
    .flatMap(({ sources }) => sources.map((source) => source.slice(WORKDIR.length)));

/** The environment the target's ENV instructions (and its parents') give its processes. */
export function imageEnvironment(stages: Stage[], target: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const stage of lineage(stages, target).reverse()) {
    for (const instruction of stage.instructions.filter(({ keyword }) => keyword === 'ENV')) {
      for (const word of instruction.words) {
        const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(word);
        if (!match) throw new Error(`line ${instruction.line}: ENV ${word} is not NAME=value`);
        env[match[1]!] = match[2]!;
      }
    }
  }
  return env;
}
