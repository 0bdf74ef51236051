import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const setupFile = (name: string) => fileURLToPath(new URL(name, import.meta.url));

/**
 * The vitest settings every package shares: a Redis from the global setup, no retries; with
 * `postgres`, a PostgreSQL too; with `long`, the package's long tests only.
 */
export function defineTestConfig(
  options: {
    testTimeout?: number;
    postgres?: boolean;
    long?: boolean;
    maxWorkers?: number;
    isolate?: boolean;
  } = {},
) {
  return defineConfig({
    test: {
      globalSetup: [
        setupFile('./global-setup.ts'),
        ...(options.postgres ? [setupFile('./postgres-setup.ts')] : []),
      ],
      // `*.long.test.ts`: the bench's whole quick run and profiles, which `npm run test:long` runs
      // after `npm test` (docs/development.md#how-long-the-tests-take).
      include: options.long
        ? ['test/**/*.long.test.ts']
        : ['src/**/*.test.ts', 'test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, ...(options.long ? [] : ['**/*.long.test.ts'])],
      testTimeout: options.testTimeout ?? 20_000,
      hookTimeout: 30_000,
      retry: 0,
      // The test files a worker runs share its loaded modules: loading them again for each file
      // cost most of the CPU of a suite (docs/development.md#how-long-the-tests-take). Every test
      // works under names of its own (queue prefix, schema, ports), so none relies on a fresh copy.
      isolate: options.isolate ?? false,
      // One file at a time (vitest's own default on two cores), as turbo runs several suites side
      // by side; the end-to-end suite, whose whole systems mostly wait, runs two.
      ...(options.maxWorkers ? { maxWorkers: options.maxWorkers } : {}),
    },
  });
}
