import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The vitest settings every package shares: a Redis from the global setup, no retries. */
export function defineTestConfig(options: { testTimeout?: number } = {}) {
  return defineConfig({
    test: {
      globalSetup: [fileURLToPath(new URL('./global-setup.ts', import.meta.url))],
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: options.testTimeout ?? 20_000,
      hookTimeout: 30_000,
      retry: 0,
    },
  });
}
