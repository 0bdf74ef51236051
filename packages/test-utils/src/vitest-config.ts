import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const setupFile = (name: string) => fileURLToPath(new URL(name, import.meta.url));

/**
 * The vitest settings every package shares: a Redis from the global setup, no retries; with
 * `postgres`, a PostgreSQL too.
 */
export function defineTestConfig(options: { testTimeout?: number; postgres?: boolean } = {}) {
  return defineConfig({
    test: {
      globalSetup: [
        setupFile('./global-setup.ts'),
        ...(options.postgres ? [setupFile('./postgres-setup.ts')] : []),
      ],
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: options.testTimeout ?? 20_000,
      hookTimeout: 30_000,
      retry: 0,
    },
  });
}
